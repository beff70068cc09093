"""The scheduler role object, built by openkeel.cmd: serves SchedulerAPI over RPC on topic
``scheduler`` and keeps the nova-scheduler service record (os-services) alive.

``SchedulerService(conf, transport, endpoint, host, service_db=..., clock=...)``; ``start()``
records the service in ``service_db`` (when given), serves RPC and reports every
``report_interval`` (on a thread unless ``start(background=False)``: tests then call
``heartbeats.run_due()``); ``stop()`` stops both.
"""

from __future__ import annotations

import sqlalchemy as sa
from oslo_config import cfg

from openkeel.db.service_presence import ServicePresence
from openkeel.rpc.server import RpcServer, ServingRole
from openkeel.rpc.transport import Transport
from openkeel.runtime.clock import Clock, SystemClock
from openkeel.runtime.periodic import PeriodicRunner, start_busy
from openkeel.scheduler.endpoint import SchedulerEndpoint, serve

BINARY = "nova-scheduler"


class SchedulerService(ServingRole):
    """One scheduler."""

    periodic: PeriodicRunner
    heartbeats: PeriodicRunner

    def __init__(
        self,
        conf: cfg.ConfigOpts,
        transport: Transport,
        endpoint: SchedulerEndpoint,
        host: str,
        *,
        service_db: sa.Engine | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.conf = conf
        self.transport = transport
        self.endpoint = endpoint
        self.host = host
        clock = clock or SystemClock()
        self.periodic = PeriodicRunner(clock, "scheduler-periodic")
        self.heartbeats = PeriodicRunner(clock, "scheduler-heartbeat")
        self.presence = (
            ServicePresence(service_db, host, BINARY, clock) if service_db is not None else None
        )
        self._server: RpcServer | None = None

    def start(self, *, background: bool = True) -> SchedulerService:
        """Record the service, serve RPC, report periodically."""
        if self._server is not None:
            return self
        if self.presence is not None:
            self.presence.register()
            self.heartbeats.add("report_state", self.presence.report, self.conf.report_interval)
        self._server = serve(self.transport, self.endpoint, self.host)
        if background:
            start_busy(self.heartbeats, self.periodic)
        return self
