"""Composition of the conductor, scheduler and compute roles around one transport.

Used by the all-in-one (every role in one process on the in-process transport and the embedded
Placement) and by the per-role entry points (``openkeel conductor|scheduler|compute``) with a
RabbitMQ transport and a remote Placement. Roles still talk only through RPC.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa
from oslo_config import cfg

from openkeel.clients.placement import PlacementClient
from openkeel.compute.service import ComputeService
from openkeel.conductor.service import ConductorService
from openkeel.db.engine import reader
from openkeel.db.repositories import compute_nodes
from openkeel.db.service_presence import home_cell
from openkeel.network.factory import get_network_adapter
from openkeel.rpc.clients.compute import ComputeRpcClient
from openkeel.rpc.clients.conductor import ConductorRpcClient
from openkeel.rpc.server import wait_quiet
from openkeel.rpc.transport import Transport
from openkeel.scheduler import endpoint as scheduler_endpoint
from openkeel.scheduler.service import SchedulerService
from openkeel.virt import loading
from openkeel.virt.driver import ComputeDriver

LOG = logging.getLogger(__name__)


@dataclass
class RoleSet:
    """Running roles; ``stop()`` stops them in reverse order of start."""

    transport: Transport
    conductor: ConductorService | None = None
    scheduler: SchedulerService | None = None
    computes: list[ComputeService] = field(default_factory=list)
    # Stopped first: what starts and stops compute hosts while running (the Node watch).
    followers: list[Callable[[], None]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def stop(self, timeout: float | None = None) -> bool:
        """Stop every role this set started, gracefully: no new work, then what is in hand
        gets ``timeout`` seconds (None: however long) to finish. True when nothing was cut
        off (what is, the next start's reconciliation settles).

        On RabbitMQ each role stops taking messages at once (the broker keeps them for another
        server or the next start). On the in-process bus the roles' only senders are one
        another once the API has stopped, and a message not taken would be lost with the
        process: the roles serve until all of them are quiet together, then stop."""
        for stop_following in reversed(self.followers):
            stop_following()
        self.followers.clear()
        with self.lock:
            computes = list(self.computes)
        roles: list[ComputeService | ConductorService | SchedulerService] = [
            *reversed(computes),
            *([self.conductor] if self.conductor is not None else []),
            *([self.scheduler] if self.scheduler is not None else []),
        ]
        deadline = None if timeout is None else time.monotonic() + timeout
        if self.transport.durable:
            for role in roles:
                role.stop_taking_work()
        else:
            for role in roles:
                role.periodic.stop()
            wait_quiet([server for role in roles for server in role.rpc_servers], timeout)
        finished = True
        for role in roles:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            finished = role.stop(timeout=left) and finished
        return finished


def start_scheduler(
    conf: cfg.ConfigOpts,
    transport: Transport,
    placement: PlacementClient,
    api_db: sa.Engine,
    cell_dbs: Mapping[str, sa.Engine],
) -> SchedulerService:
    """The scheduler: its RPC server on topic ``scheduler`` and its service record."""
    endpoint = scheduler_endpoint.SchedulerEndpoint.from_conf(
        conf, placement, cell_dbs, api_db=api_db
    )
    home = home_cell(cell_dbs, conf.database.connection)
    return SchedulerService(conf, transport, endpoint, conf.host, service_db=home).start()


def start_conductor(
    conf: cfg.ConfigOpts,
    transport: Transport,
    placement: PlacementClient,
    api_db: sa.Engine,
    cell_dbs: Mapping[str, sa.Engine],
) -> ConductorService:
    """The conductor's RPC server on topic ``conductor`` and its service record."""
    home = home_cell(cell_dbs, conf.database.connection)
    return ConductorService(
        conf, transport, api_db, dict(cell_dbs), placement, service_db=home
    ).start()


def start_compute(
    conf: cfg.ConfigOpts,
    transport: Transport,
    placement: PlacementClient,
    api_db: sa.Engine,
    cell: tuple[str, sa.Engine],
    driver: ComputeDriver,
    host: str | None = None,
) -> ComputeService:
    """One compute host (``host`` or ``[DEFAULT] host``) in the given cell."""
    cell_uuid, cell_db = cell
    service = ComputeService(
        conf, driver, transport, placement, api_db, cell_db,
        network=get_network_adapter(conf, api_db), cell_uuid=cell_uuid, host=host,
    )  # fmt: skip
    return service.start()


def follow_nodes(
    conf: cfg.ConfigOpts, roles: RoleSet, start_host: Callable[[str], ComputeService]
) -> None:
    """With KubeVirt, compute hosts follow the cluster's Nodes while running: a Node that
    joins gets a host (``start_host``), one that leaves has its host stopped (its service
    then shows down; its servers can be evacuated). No-op for the simulated driver."""

    def join(node: str) -> None:
        try:
            service = start_host(node)
        except Exception:
            LOG.exception("Could not start the compute host of node %s", node)
            return
        with roles.lock:
            roles.computes.append(service)

    def leave(node: str) -> None:
        with roles.lock:
            gone = [c for c in roles.computes if c.hostname == node]
            roles.computes[:] = [c for c in roles.computes if c.hostname != node]
        for service in gone:
            LOG.warning("Node %s left: stopping its compute host", node)
            service.stop()

    stop = loading.follow_nodes(conf, [c.hostname for c in roles.computes], join, leave)
    if stop is not None:
        roles.followers.append(stop)


def node_name(cell_db: sa.Engine, host: str) -> str:
    """The simulated node of ``host``: the name it registered with before (a data directory
    from a version whose simulated nodes were all called ``fake-mini`` keeps its servers on
    it), else the host's own name."""
    with reader(cell_db).connect() as conn:
        known = compute_nodes.nodes_of_host(conn, host)
    return (known[0].hypervisor_hostname if known else None) or host


def api_clients(transport: Transport) -> dict[str, Any]:
    """The RPC clients the API role needs (fields of ``ApiServices``)."""
    return {"conductor": ConductorRpcClient(transport), "compute": ComputeRpcClient(transport)}
