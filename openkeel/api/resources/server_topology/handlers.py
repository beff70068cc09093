"""Server topology handler: the use case's topology in Nova's body. Registered by
``routes.py``."""

from __future__ import annotations

from typing import Any

from openkeel.api.request import ApiRequest
from openkeel.api.usecases.server_topology import topology

HOST_FIELDS = ("host_node", "cpu_pinning")


def show_server_topology(req: ApiRequest) -> dict[str, Any]:
    """GET /servers/{server_id}/topology: the host side only for callers allowed it."""
    found = topology(req.services, req.context, req.params["server_id"])
    nodes = [
        {k: v for k, v in node.items() if found.with_host or k not in HOST_FIELDS}
        for node in found.nodes
    ]
    return {"nodes": nodes, "pagesize_kb": found.pagesize_kb}
