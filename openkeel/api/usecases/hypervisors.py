"""Compute nodes across cells with their compute service, for ``os-hypervisors``.

Called by the ``os-hypervisors`` handlers. Nodes are read from every cell but cell0; a node's
service and servers are found through the host's mapping in the API database, as Nova's
HostAPI does, so a node whose host is unmapped or whose service is gone is left out of lists.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import sqlalchemy as sa

from openkeel.api.services import ApiServices
from openkeel.api.usecases.services import CELL0_UUID, COMPUTE, is_uuid_like, service_is_up
from openkeel.db.repositories import compute_nodes as nodes_repo
from openkeel.db.repositories import services as services_repo
from openkeel.domain.errors import Invalid, NotFound, NotImplementedYet
from openkeel.rpc.errors import MessagingError
from openkeel.rpc.message import CallContext
from openkeel.rpc.messages.compute import GetHostUptime

_INT32 = 2**31


@dataclass(frozen=True)
class Server:
    """A server listed under its hypervisor: Nova's instance name and uuid."""

    name: str
    uuid: str


@dataclass(frozen=True)
class Hypervisor:
    """A compute node, its compute service and (when asked) its servers."""

    node: nodes_repo.ComputeNodeRecord
    service: services_repo.ServiceRecord
    up: bool
    servers: list[Server] | None = None
    # The 2.88 ``uptime`` field, when looked up (HypervisorCatalog.shown_uptime).
    uptime: str | None = None

    def stats_uptime(self) -> str | None:
        """The ``uptime`` the node's ``stats`` report, if any."""
        try:
            stats = json.loads(self.node.stats or "{}")
        except ValueError:
            return None
        value = stats.get("uptime") if isinstance(stats, dict) else None
        return str(value) if value is not None else None


def not_found(hypervisor_id: str) -> NotFound:
    """Nova's 404 for an unknown hypervisor id."""
    return NotFound(f"Hypervisor with ID '{hypervisor_id}' could not be found.")


class HypervisorCatalog:
    """Hypervisors of the deployment (built from ``req.services``)."""

    def __init__(self, services: ApiServices) -> None:
        self._conf = services.conf
        self._api_db: sa.Engine = services.api_db
        cells: Mapping[str, sa.Engine] = services.cell_dbs or {}
        self._cells = {k: e for k, e in cells.items() if k != CELL0_UUID}
        self._compute = services.compute

    def _each_cell(self) -> Iterator[sa.Connection]:
        for engine in self._cells.values():
            with engine.connect() as conn:
                yield conn

    def _host_cell(self, host: str | None) -> sa.Engine | None:
        with self._api_db.connect() as conn:
            cell_uuid = services_repo.host_cell(conn, host or "")
        return self._cells.get(cell_uuid or "")

    def _server_name(self, server: nodes_repo.HostedServer) -> str:
        template = str(self._conf.instance_name_template)
        try:
            return template % server.id
        except TypeError:
            return template % {"id": server.id, "uuid": server.uuid}

    def describe(
        self, node: nodes_repo.ComputeNodeRecord, with_servers: bool, strict: bool = False
    ) -> Hypervisor | None:
        """``node`` with its service (None when unmapped or without a compute service).

        ``strict``: an unmapped host is a 404 naming the host (the pre-2.53 search routes).
        """
        engine = self._host_cell(node.host)
        if engine is None:
            if strict:
                raise NotFound(f"Host '{node.host}' is not mapped to any cell")
            return None
        with engine.connect() as conn:
            service = services_repo.get_by_host_and_binary(conn, node.host or "", COMPUTE)
            hosted = nodes_repo.servers_on_host(conn, node.host or "") if with_servers else None
        if service is None:
            return None
        servers = [Server(self._server_name(s), s.uuid) for s in hosted or []]
        up = service_is_up(service, int(self._conf.service_down_time))
        return Hypervisor(node, service, up, servers if hosted is not None else None)

    def page(self, limit: int | None, marker: str | None) -> list[nodes_repo.ComputeNodeRecord]:
        """Nodes of every cell in cell order then id, after ``marker``, ``limit`` at most."""
        found: list[nodes_repo.ComputeNodeRecord] = []
        pending = marker
        for conn in self._each_cell():
            after: int | None = None
            if pending is not None:
                marked = _lookup(conn, pending)
                if marked is None:
                    continue
                after, pending = marked.id, None
            in_cell = nodes_repo.list_nodes(conn, limit, after)
            found.extend(in_cell)
            if limit:
                limit -= len(in_cell)
                if limit <= 0:
                    break
        if pending is not None:
            raise Invalid(f"marker [{pending}] not found")
        return found

    def search(self, pattern: str) -> list[nodes_repo.ComputeNodeRecord]:
        """Nodes whose hypervisor hostname contains ``pattern``; 404 when none."""
        found = [n for conn in self._each_cell() for n in nodes_repo.search_nodes(conn, pattern)]
        if not found:
            raise NotFound(f"No hypervisor matching '{pattern}' could be found.")
        return found

    def get(self, hypervisor_id: str) -> nodes_repo.ComputeNodeRecord:
        """The node with this uuid or (validated) integer id; 404 when absent."""
        for conn in self._each_cell():
            node = _lookup(conn, hypervisor_id)
            if node is not None:
                return node
        raise not_found(hypervisor_id)

    def statistics(self) -> dict[str, int]:
        """Sums over the nodes of enabled compute services, cell by cell."""
        totals: dict[str, int] = {}
        for conn in self._each_cell():
            for key, value in nodes_repo.statistics(conn).items():
                totals[key] = totals.get(key, 0) + value
        return totals

    def uptime(self, hypervisor: Hypervisor, context: CallContext) -> str:
        """The host's uptime as its driver reports it (a call to the compute host, as Nova's
        HostAPI.get_host_uptime): 400 when its service is down, 501 when the driver cannot
        tell (or no compute host can be reached from this process)."""
        if not hypervisor.up:
            host = hypervisor.node.host
            raise Invalid(f"Compute service of {host} is unavailable at this time.")
        if self._compute is None:
            raise NotImplementedYet("The requested functionality is not supported.")
        return str(self._compute.call(context, hypervisor.node.host or "", GetHostUptime()))

    def shown_uptime(self, hypervisor: Hypervisor, context: CallContext) -> str | None:
        """The 2.88 ``uptime`` field: the node's stats when they carry it, else the driver's
        answer; None when the service is down or the driver cannot tell (as Nova)."""
        from_stats = hypervisor.stats_uptime()
        if from_stats is not None:
            return from_stats
        try:
            return self.uptime(hypervisor, context)
        except (Invalid, NotImplementedYet, NotFound, MessagingError):
            return None


def _lookup(conn: sa.Connection, key: str) -> nodes_repo.ComputeNodeRecord | None:
    if is_uuid_like(key):
        return nodes_repo.get_node_by_uuid(conn, key)
    try:
        node_id = int(key)
    except ValueError:
        return None
    return nodes_repo.get_node(conn, node_id) if -_INT32 <= node_id < _INT32 else None
