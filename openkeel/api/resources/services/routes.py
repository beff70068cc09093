"""Routes of ``/os-services``."""

from __future__ import annotations

from openkeel.api.resources.services import handlers, schemas
from openkeel.api.routing import RouteTable, endpoint


def register(table: RouteTable) -> None:
    """Add the routes to ``table``."""
    table.add(
        "GET",
        "/os-services",
        endpoint(
            handlers.list_services, query=schemas.INDEX_QUERY, policy=handlers.POLICY % "list"
        ),
    )
    table.add(
        "PUT",
        "/os-services/{id}",
        endpoint(handlers.update_service, body=schemas.UPDATE, policy=handlers.POLICY % "update"),
    )
    table.add(
        "DELETE",
        "/os-services/{id}",
        endpoint(handlers.delete_service, status=204, policy=handlers.POLICY % "delete"),
    )
