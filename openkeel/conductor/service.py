"""The conductor role object, built by openkeel.cmd: serves ComputeTaskAPI over RPC.

``ConductorService(conf, transport, api_db, cell_router, placement=..., clock=...)``: the
cell router is any mapping cell uuid → Engine. ``start()`` listens on topic ``conductor``
(any conductor may take a message); ``stop()`` stops listening.
"""

from __future__ import annotations

import sqlalchemy as sa
from oslo_config import cfg

from openkeel.clients.placement import PlacementClient
from openkeel.compute.clock import Clock, SystemClock
from openkeel.conductor.cells import CellEngines
from openkeel.conductor.context import ConductorDeps
from openkeel.conductor.endpoint import ComputeTaskEndpoint
from openkeel.rpc.clients.compute import ComputeRpcClient
from openkeel.rpc.clients.scheduler import SchedulerRpcClient
from openkeel.rpc.message import Target
from openkeel.rpc.server import RpcServer
from openkeel.rpc.transport import Transport

TOPIC = "conductor"


class ConductorService:
    """One conductor."""

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
        )
        self.endpoint = ComputeTaskEndpoint(self.deps)
        self._server: RpcServer | None = None

    def start(self) -> ConductorService:
        if self._server is None:
            target = Target(TOPIC, server=self.host)
            self._server = RpcServer(self.transport, target, [self.endpoint]).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._server = None
