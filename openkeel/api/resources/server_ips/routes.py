"""Routes of /servers/{server_id}/ips: index and show."""

from __future__ import annotations

from openkeel.api.resources.server_ips import handlers, schemas
from openkeel.api.routing import RouteTable, endpoint
from openkeel.api.validation import Versioned

COLLECTION = "/servers/{server_id}/ips"
MEMBER = "/servers/{server_id}/ips/{id}"
POLICY = "os_compute_api:ips:%s"

QUERY = Versioned.of(("2.0", schemas.QUERY_V21), ("2.102", schemas.QUERY_V2102))


def register(table: RouteTable) -> None:
    """Add the server IPs routes to ``table``."""
    table.add(
        "GET", COLLECTION, endpoint(handlers.list_server_ips, query=QUERY, policy=POLICY % "index")
    )
    table.add(
        "GET", MEMBER, endpoint(handlers.show_server_ips, query=QUERY, policy=POLICY % "show")
    )
