"""Routes of /servers/{server_id}/metadata: index, create, update_all, show, update, delete."""

from __future__ import annotations

from openkeel.api.resources.server_metadata import handlers, schemas
from openkeel.api.routing import RouteTable, endpoint
from openkeel.api.validation import Versioned

COLLECTION = "/servers/{server_id}/metadata"
MEMBER = "/servers/{server_id}/metadata/{id}"
POLICY = "os_compute_api:server-metadata:%s"

QUERY = Versioned.of(("2.0", schemas.QUERY_V21), ("2.102", schemas.QUERY_V2102))
CREATE_BODY = Versioned.of(("2.0", schemas.CREATE_V21))
UPDATE_ALL_BODY = Versioned.of(("2.0", schemas.UPDATE_ALL_V21))
UPDATE_BODY = Versioned.of(("2.0", schemas.UPDATE_V21))


def register(table: RouteTable) -> None:
    """Add the server metadata routes to ``table``."""
    table.add(
        "GET",
        COLLECTION,
        endpoint(handlers.list_server_metadata, query=QUERY, policy=POLICY % "index"),
    )
    table.add(
        "POST",
        COLLECTION,
        endpoint(handlers.create_server_metadata, body=CREATE_BODY, policy=POLICY % "create"),
    )
    table.add(
        "PUT",
        COLLECTION,
        endpoint(
            handlers.replace_server_metadata, body=UPDATE_ALL_BODY, policy=POLICY % "update_all"
        ),
    )
    table.add(
        "GET",
        MEMBER,
        endpoint(handlers.show_server_metadata_item, query=QUERY, policy=POLICY % "show"),
    )
    table.add(
        "PUT",
        MEMBER,
        endpoint(handlers.update_server_metadata_item, body=UPDATE_BODY, policy=POLICY % "update"),
    )
    table.add(
        "DELETE",
        MEMBER,
        endpoint(handlers.delete_server_metadata_item, status=204, policy=POLICY % "delete"),
    )
