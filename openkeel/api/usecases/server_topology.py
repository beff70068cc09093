"""Server topology use case (2.78): the guest's NUMA cells, their vCPUs and memory, and for
admins where each cell sits on the host (``host_node``, ``cpu_pinning``).

Called by GET /servers/{server_id}/topology. OpenKeel records no NUMA topology for its servers
yet, which Nova answers for a server without one: no nodes and no page size.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from openkeel.api.context import RequestContext
from openkeel.api.services import ApiServices
from openkeel.api.usecases.servers.lookup import find_server

POLICY = "compute:server:topology:index"
HOST_POLICY = "compute:server:topology:host:index"


@dataclass(frozen=True)
class ServerTopology:
    """What the view shows; ``with_host`` when the caller may see the host side."""

    nodes: list[dict[str, Any]] = field(default_factory=list)
    pagesize_kb: int | None = None
    with_host: bool = False


def topology(services: ApiServices, context: RequestContext, server_id: str) -> ServerTopology:
    """The topology of a server the caller can see (policy checked against its project)."""
    inst = find_server(services, context, server_id).instance
    target = {"project_id": inst.project_id}
    context.can(POLICY, target)
    with_host = bool(context.can(HOST_POLICY, target, fatal=False))
    return ServerTopology(with_host=with_host)
