"""Routes of os-aggregates: CRUD, the add_host/remove_host/set_metadata actions and the 2.81
image cache request."""

from __future__ import annotations

from openkeel.api.resources.aggregates import handlers, schemas
from openkeel.api.routing import RouteTable, endpoint
from openkeel.api.validation import Versioned

COLLECTION = "/os-aggregates"
MEMBER = "/os-aggregates/{id}"
ACTION = "/os-aggregates/{id}/action"
POLICY = "os_compute_api:os-aggregates:%s"

QUERY = Versioned.of(("2.1", schemas.QUERY_V21), ("2.102", schemas.QUERY_V2102))
CREATE_BODY = Versioned.of(("2.0", schemas.CREATE_V20), ("2.1", schemas.CREATE_V21))
UPDATE_BODY = Versioned.of(("2.0", schemas.UPDATE_V20), ("2.1", schemas.UPDATE_V21))


def register(table: RouteTable) -> None:
    """Add the os-aggregates routes to ``table``."""
    table.add(
        "GET", COLLECTION, endpoint(handlers.list_aggregates, query=QUERY, policy=POLICY % "index")
    )
    table.add(
        "POST",
        COLLECTION,
        endpoint(handlers.create_aggregate, body=CREATE_BODY, policy=POLICY % "create"),
    )
    table.add("GET", MEMBER, endpoint(handlers.show_aggregate, query=QUERY, policy=POLICY % "show"))
    table.add(
        "PUT",
        MEMBER,
        endpoint(handlers.update_aggregate, body=UPDATE_BODY, policy=POLICY % "update"),
    )
    table.add("DELETE", MEMBER, endpoint(handlers.delete_aggregate, policy=POLICY % "delete"))
    for key, handler, schema in (
        ("add_host", handlers.add_host, schemas.ADD_HOST),
        ("remove_host", handlers.remove_host, schemas.REMOVE_HOST),
        ("set_metadata", handlers.set_metadata, schemas.SET_METADATA),
    ):
        table.add_action(
            ACTION, key, endpoint(handler, body=Versioned.of(("2.1", schema)), policy=POLICY % key)
        )
    table.add(
        "POST",
        "/os-aggregates/{id}/images",
        endpoint(
            handlers.cache_images,
            status=202,
            since="2.81",
            body=Versioned.of(("2.81", schemas.IMAGES_V281)),
            policy="compute:aggregates:images",
        ),
    )
