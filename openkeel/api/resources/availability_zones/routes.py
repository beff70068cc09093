"""Routes of ``/os-availability-zone``."""

from __future__ import annotations

from openkeel.api.resources.availability_zones import handlers, schemas
from openkeel.api.routing import RouteTable, endpoint


def register(table: RouteTable) -> None:
    """Add the routes to ``table``."""
    table.add(
        "GET",
        "/os-availability-zone",
        endpoint(
            handlers.list_availability_zones,
            query=schemas.QUERY,
            policy=handlers.POLICY % "list",
        ),
    )
    table.add(
        "GET",
        "/os-availability-zone/detail",
        endpoint(
            handlers.list_availability_zones_detail,
            query=schemas.QUERY,
            policy=handlers.POLICY % "detail",
        ),
    )
