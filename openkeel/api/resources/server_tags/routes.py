"""Routes of /servers/{server_id}/tags (2.26+): index, update_all, delete_all, show, update,
delete."""

from __future__ import annotations

from openkeel.api.resources.server_tags import handlers, schemas
from openkeel.api.routing import RouteTable, endpoint
from openkeel.api.validation import Versioned

SINCE = "2.26"
COLLECTION = "/servers/{server_id}/tags"
MEMBER = "/servers/{server_id}/tags/{id}"
POLICY = "os_compute_api:os-server-tags:%s"

QUERY = Versioned.of((SINCE, schemas.QUERY_V226))
UPDATE_ALL_BODY = Versioned.of((SINCE, schemas.UPDATE_ALL_V226))
UPDATE_BODY = Versioned.of((SINCE, schemas.UPDATE_V226))


def register(table: RouteTable) -> None:
    """Add the server tags routes to ``table``."""
    routes = (
        ("GET", COLLECTION, handlers.list_server_tags, 200, "index", QUERY, None),
        ("PUT", COLLECTION, handlers.replace_server_tags, 200, "update_all", None,
         UPDATE_ALL_BODY),
        ("DELETE", COLLECTION, handlers.delete_server_tags, 204, "delete_all", None, None),
        ("GET", MEMBER, handlers.check_server_tag, 204, "show", QUERY, None),
        ("PUT", MEMBER, handlers.add_server_tag, 201, "update", None, UPDATE_BODY),
        ("DELETE", MEMBER, handlers.delete_server_tag, 204, "delete", None, None),
    )  # fmt: skip
    for method, template, handler, status, rule, query, body in routes:
        table.add(
            method,
            template,
            endpoint(handler, status, since=SINCE, query=query, body=body, policy=POLICY % rule),
        )
