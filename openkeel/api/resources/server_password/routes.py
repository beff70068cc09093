"""Routes of /servers/{server_id}/os-server-password: index (show) and clear."""

from __future__ import annotations

from openkeel.api.resources.server_ips import schemas
from openkeel.api.resources.server_password import handlers
from openkeel.api.routing import RouteTable, endpoint
from openkeel.api.validation import Versioned

PATH = "/servers/{server_id}/os-server-password"
POLICY = "os_compute_api:os-server-password:%s"

# Nova: any query before 2.102, none after (the same deltas as the server IPs queries).
QUERY = Versioned.of(("2.0", schemas.QUERY_V21), ("2.102", schemas.QUERY_V2102))


def register(table: RouteTable) -> None:
    """Add the server password routes to ``table``."""
    table.add("GET", PATH, endpoint(handlers.show_server_password, query=QUERY,
                                    policy=POLICY % "show"))  # fmt: skip
    table.add(
        "DELETE",
        PATH,
        endpoint(handlers.clear_server_password, status=204, policy=POLICY % "clear"),
    )
