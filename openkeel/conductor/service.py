"""The conductor role object, built by openkeel.cmd: serves ComputeTaskAPI over RPC.

``ConductorService(conf, transport, api_db, cell_router, placement=..., clock=...)``: the
cell router is any mapping cell uuid → Engine; ``service_db``, the cell database holding the
nova-conductor service record. ``start()`` records the service (heartbeat every
``report_interval``), settles the builds an earlier process left behind (on the in-process
transport every build request older than this process is orphaned: its cast died with that
process), listens on topic ``conductor`` (any conductor
may take a message) and sweeps for orphaned builds periodically (``[conductor]
orphan_sweep_interval``, builds older than ``build_request_timeout``); ``stop()`` stops both.
"""

from __future__ import annotations

import datetime
import logging

import sqlalchemy as sa
from oslo_config import cfg

from openkeel.clients.placement import PlacementClient
from openkeel.conductor.cells import CellEngines
from openkeel.conductor.context import ConductorDeps
from openkeel.conductor.endpoint import ComputeTaskEndpoint
from openkeel.conductor.tasks import orphans
from openkeel.db.service_presence import ServicePresence
from openkeel.notifications.emitter import notifier_from_conf
from openkeel.rpc.clients.compute import ComputeRpcClient
from openkeel.rpc.clients.scheduler import SchedulerRpcClient
from openkeel.rpc.message import Target
from openkeel.rpc.server import RpcServer, ServingRole
from openkeel.rpc.transport import Transport
from openkeel.runtime.clock import Clock, SystemClock
from openkeel.runtime.periodic import PeriodicRunner, start_busy

LOG = logging.getLogger(__name__)

TOPIC = "conductor"
BINARY = "nova-conductor"


class ConductorService(ServingRole):
    """One conductor."""

    periodic: PeriodicRunner
    heartbeats: PeriodicRunner

    def __init__(
        self,
        conf: cfg.ConfigOpts,
        transport: Transport,
        api_db: sa.Engine,
        cell_router: CellEngines,
        placement: PlacementClient,
        *,
        clock: Clock | None = None,
        host: str | None = None,
        service_db: sa.Engine | None = None,
    ) -> None:
        self.transport = transport
        self.host: str = host or conf.host
        self.deps = ConductorDeps(
            conf=conf,
            api_db=api_db,
            cells=cell_router,
            placement=placement,
            scheduler=SchedulerRpcClient(transport),
            compute=ComputeRpcClient(transport),
            clock=clock or SystemClock(),
            notifier=notifier_from_conf(conf).prepare("nova-conductor", host or conf.host),
        )
        self.endpoint = ComputeTaskEndpoint(self.deps)
        self.periodic = PeriodicRunner(self.deps.clock, "conductor-periodic")
        # report_state on a thread of its own (Nova's timer): a long sweep over slow cell
        # databases must not make the conductor look down.
        self.heartbeats = PeriodicRunner(self.deps.clock, "conductor-heartbeat")
        self._started_at = self.deps.clock.now()
        # The nova-conductor service record (os-services) and its heartbeat.
        self.presence = (
            ServicePresence(service_db, self.host, BINARY, self.deps.clock)
            if service_db is not None
            else None
        )
        self._server: RpcServer | None = None

    def start(self, *, background: bool = True) -> ConductorService:
        """Settle what an earlier process left, serve RPC, sweep periodically (on a thread
        unless ``background=False``: tests then call ``periodic.run_due()``)."""
        if self._server is not None:
            return self
        if not self.transport.durable:
            self.sweep_orphans(self._started_at)
        target = Target(TOPIC, server=self.host)
        self._server = RpcServer(self.transport, target, [self.endpoint]).start()
        conf = self.deps.conf
        if self.presence is not None:
            self.presence.register()
            self.heartbeats.add("report_state", self.presence.report, conf.report_interval)
        interval = int(conf.conductor.orphan_sweep_interval)
        if int(conf.conductor.build_request_timeout) > 0 and interval >= 0:
            self.periodic.add("sweep_orphaned_builds", self._sweep_stale, interval)
        if background:
            start_busy(self.heartbeats, self.periodic)
        return self

    def sweep_orphans(self, created_before: datetime.datetime) -> None:
        """Settle build requests older than ``created_before`` and remove unmapped rows."""
        try:
            orphans.sweep_build_requests(self.deps, created_before)
            orphans.sweep_unmapped_instances(self.deps, self.deps.clock.now())
        except Exception:
            LOG.exception("The sweep for orphaned builds failed; it runs again later")

    def _sweep_stale(self) -> None:
        timeout = int(self.deps.conf.conductor.build_request_timeout)
        cutoff = self.deps.clock.now() - datetime.timedelta(seconds=timeout)
        self.sweep_orphans(cutoff)
        try:  # periodic only: at start-up the hosts may simply not have reported yet
            orphans.sweep_builds_on_dead_hosts(self.deps, cutoff)
        except Exception:
            LOG.exception("The sweep for builds on lost hosts failed; it runs again later")
