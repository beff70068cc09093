"""Route of /servers/{server_id}/topology (2.78)."""

from __future__ import annotations

from openkeel.api.resources.server_ips import schemas
from openkeel.api.resources.server_topology import handlers
from openkeel.api.routing import RouteTable, endpoint
from openkeel.api.validation import Versioned

PATH = "/servers/{server_id}/topology"

QUERY = Versioned.of(("2.78", schemas.QUERY_V21), ("2.102", schemas.QUERY_V2102))


def register(table: RouteTable) -> None:
    """Add the server topology route to ``table``."""
    table.add(
        "GET",
        PATH,
        endpoint(handlers.show_server_topology, since="2.78", query=QUERY,
                 policy="compute:server:topology:index"),
    )  # fmt: skip
