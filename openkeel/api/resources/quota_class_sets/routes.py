"""Routes of ``/os-quota-class-sets``."""

from __future__ import annotations

from openkeel.api.resources.quota_class_sets import handlers, schemas
from openkeel.api.routing import RouteTable, endpoint

_ITEM = "/os-quota-class-sets/{id}"


def register(table: RouteTable) -> None:
    """Add the routes to ``table``."""
    show = endpoint(
        handlers.show_quota_class_set,
        query=schemas.SHOW_QUERY,
        policy=handlers.POLICY % "show",
    )
    update = endpoint(
        handlers.update_quota_class_set,
        body=schemas.UPDATE,
        policy=handlers.POLICY % "update",
    )
    table.add("GET", _ITEM, show)
    table.add("PUT", _ITEM, update)
