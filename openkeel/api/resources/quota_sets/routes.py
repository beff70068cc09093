"""Routes of ``/os-quota-sets``."""

from __future__ import annotations

from openkeel.api.resources.quota_sets import handlers, schemas
from openkeel.api.routing import RouteTable, endpoint

_ITEM = "/os-quota-sets/{id}"


def register(table: RouteTable) -> None:
    """Add the routes to ``table``."""
    policy = handlers.POLICY
    table.add(
        "GET",
        _ITEM,
        endpoint(handlers.show_quota_set, query=schemas.USER_QUERY, policy=policy % "show"),
    )
    table.add(
        "PUT",
        _ITEM,
        endpoint(
            handlers.update_quota_set,
            body=schemas.UPDATE,
            query=schemas.USER_QUERY,
            policy=policy % "update",
        ),
    )
    table.add(
        "DELETE",
        _ITEM,
        endpoint(
            handlers.delete_quota_set,
            status=202,
            query=schemas.USER_QUERY,
            policy=policy % "delete",
        ),
    )
    table.add(
        "GET",
        f"{_ITEM}/detail",
        endpoint(
            handlers.show_quota_set_detail, query=schemas.USER_QUERY, policy=policy % "detail"
        ),
    )
    table.add(
        "GET",
        f"{_ITEM}/defaults",
        endpoint(
            handlers.show_quota_set_defaults,
            query=schemas.DEFAULTS_QUERY,
            policy=policy % "defaults",
        ),
    )
