"""Route of /servers/{server_id}/diagnostics."""

from __future__ import annotations

from openkeel.api.resources.server_diagnostics import handlers
from openkeel.api.resources.server_ips import schemas
from openkeel.api.routing import RouteTable, endpoint
from openkeel.api.usecases.server_diagnostics import POLICY
from openkeel.api.validation import Versioned

PATH = "/servers/{server_id}/diagnostics"
# Nova's query schemas are those of server ips: anything, strict from 2.102.
QUERY = Versioned.of(("2.1", schemas.QUERY_V21), ("2.102", schemas.QUERY_V2102))


def register(table: RouteTable) -> None:
    """Add the diagnostics route to ``table``."""
    table.add("GET", PATH, endpoint(handlers.show_diagnostics, query=QUERY, policy=POLICY))
