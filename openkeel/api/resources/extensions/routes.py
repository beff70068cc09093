"""Routes of the extensions resource; called by :func:`openkeel.api.factory.build_routes`."""

from __future__ import annotations

from openkeel.api.resources.extensions import handlers, schemas
from openkeel.api.routing import RouteTable, endpoint


def register(table: RouteTable) -> None:
    """Add ``GET /extensions`` and ``GET /extensions/{alias}`` to ``table``."""
    table.add(
        "GET",
        "/extensions",
        endpoint(handlers.list_extensions, query=schemas.INDEX_QUERY, policy=handlers.POLICY),
    )
    table.add(
        "GET",
        "/extensions/{alias}",
        endpoint(handlers.show_extension, query=schemas.SHOW_QUERY, policy=handlers.POLICY),
    )
