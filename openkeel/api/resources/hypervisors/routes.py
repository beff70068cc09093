"""Routes of ``/os-hypervisors``."""

from __future__ import annotations

from openkeel.api.resources.hypervisors import handlers, schemas
from openkeel.api.routing import RouteTable, endpoint

_BASE = "/os-hypervisors"


def register(table: RouteTable) -> None:
    """Add the routes to ``table``."""
    p = handlers.POLICY
    table.add(
        "GET",
        _BASE,
        endpoint(handlers.list_hypervisors, query=schemas.INDEX_QUERY, policy=p % "list"),
    )
    table.add(
        "GET",
        f"{_BASE}/detail",
        endpoint(
            handlers.list_hypervisors_detail, query=schemas.INDEX_QUERY, policy=p % "list-detail"
        ),
    )
    table.add(
        "GET",
        f"{_BASE}/statistics",
        endpoint(
            handlers.show_statistics,
            until="2.87",
            query=schemas.ANY_QUERY,
            policy=p % "statistics",
        ),
    )
    table.add(
        "GET",
        f"{_BASE}/{{id}}",
        endpoint(handlers.show_hypervisor, query=schemas.SHOW_QUERY, policy=p % "show"),
    )
    table.add(
        "GET",
        f"{_BASE}/{{id}}/uptime",
        endpoint(handlers.show_uptime, until="2.87", query=schemas.ANY_QUERY, policy=p % "uptime"),
    )
    table.add(
        "GET",
        f"{_BASE}/{{id}}/search",
        endpoint(
            handlers.search_hypervisors, until="2.52", query=schemas.ANY_QUERY, policy=p % "search"
        ),
    )
    table.add(
        "GET",
        f"{_BASE}/{{id}}/servers",
        endpoint(
            handlers.list_hypervisor_servers,
            until="2.52",
            query=schemas.ANY_QUERY,
            policy=p % "servers",
        ),
    )
