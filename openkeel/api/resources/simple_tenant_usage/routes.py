"""Routes of os-simple-tenant-usage."""

from __future__ import annotations

from openkeel.api.resources.simple_tenant_usage import handlers, schemas
from openkeel.api.routing import RouteTable, endpoint
from openkeel.api.validation import Versioned

INDEX_QUERY = Versioned.of(
    ("2.1", schemas.INDEX_V21), ("2.40", schemas.INDEX_V240), ("2.75", schemas.INDEX_V275)
)
SHOW_QUERY = Versioned.of(
    ("2.1", schemas.SHOW_V21), ("2.40", schemas.SHOW_V240), ("2.75", schemas.SHOW_V275)
)


def register(table: RouteTable) -> None:
    """Add the usage list and the usage of one project."""
    table.add(
        "GET",
        handlers.COLLECTION,
        endpoint(handlers.index, query=INDEX_QUERY, policy=handlers.POLICY % "list"),
    )
    table.add(
        "GET",
        f"{handlers.COLLECTION}/{{id}}",
        endpoint(handlers.show, query=SHOW_QUERY, policy=handlers.POLICY % "show"),
    )
