"""Routes of os-instance-actions: list and show with their query schemas per microversion."""

from __future__ import annotations

from openkeel.api.resources.instance_actions import handlers, schemas
from openkeel.api.routing import RouteTable, endpoint
from openkeel.api.validation import Versioned

COLLECTION = "/servers/{server_id}/os-instance-actions"
MEMBER = "/servers/{server_id}/os-instance-actions/{id}"
POLICY = "os_compute_api:os-instance-actions:%s"

INDEX_QUERY = Versioned.of(
    ("2.0", schemas.INDEX_QUERY_V21),
    ("2.58", schemas.INDEX_QUERY_V258),
    ("2.66", schemas.INDEX_QUERY_V266),
)
SHOW_QUERY = Versioned.of(("2.0", schemas.SHOW_QUERY_V21), ("2.102", schemas.SHOW_QUERY_V2102))


def register(table: RouteTable) -> None:
    """Add the os-instance-actions routes to ``table``."""
    table.add(
        "GET",
        COLLECTION,
        endpoint(handlers.list_instance_actions, query=INDEX_QUERY, policy=POLICY % "list"),
    )
    table.add(
        "GET",
        MEMBER,
        endpoint(handlers.show_instance_action, query=SHOW_QUERY, policy=POLICY % "show"),
    )
