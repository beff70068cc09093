"""Routes of ``/limits``."""

from __future__ import annotations

from openkeel.api.resources.limits import handlers, schemas
from openkeel.api.routing import RouteTable, endpoint


def register(table: RouteTable) -> None:
    """Add the routes to ``table``."""
    table.add(
        "GET",
        "/limits",
        endpoint(handlers.show_limits, query=schemas.INDEX_QUERY, policy=handlers.POLICY),
    )
