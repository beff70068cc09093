"""Routes of os-server-groups: list, create, show, delete with their microversion windows."""

from __future__ import annotations

from openkeel.api.resources.server_groups import handlers, schemas
from openkeel.api.routing import RouteTable, endpoint
from openkeel.api.validation import Versioned

COLLECTION = "/os-server-groups"
MEMBER = "/os-server-groups/{id}"
POLICY = "os_compute_api:os-server-groups:%s"

INDEX_QUERY = Versioned.of(("2.0", schemas.INDEX_QUERY_V21), ("2.75", schemas.INDEX_QUERY_V275))
SHOW_QUERY = Versioned.of(("2.1", schemas.SHOW_QUERY_V21), ("2.102", schemas.SHOW_QUERY_V2102))
CREATE_BODY = Versioned.of(
    ("2.0", schemas.CREATE_V21),
    ("2.15", schemas.CREATE_V215),
    ("2.64", schemas.CREATE_V264),
)


def register(table: RouteTable) -> None:
    """Add the os-server-groups routes to ``table``."""
    table.add(
        "GET",
        COLLECTION,
        endpoint(handlers.list_server_groups, query=INDEX_QUERY, policy=POLICY % "index"),
    )
    table.add(
        "POST",
        COLLECTION,
        endpoint(handlers.create_server_group, body=CREATE_BODY, policy=POLICY % "create"),
    )
    table.add(
        "GET",
        MEMBER,
        endpoint(handlers.show_server_group, query=SHOW_QUERY, policy=POLICY % "show"),
    )
    table.add(
        "DELETE",
        MEMBER,
        endpoint(handlers.delete_server_group, status=204, policy=POLICY % "delete"),
    )
