"""Routes of /images/{image_id}/metadata: gone (404) after 2.38."""

from __future__ import annotations

from openkeel.api.resources.image_metadata import handlers, schemas
from openkeel.api.routing import RouteTable, endpoint
from openkeel.api.validation import Versioned

UNTIL = "2.38"
COLLECTION = "/images/{image_id}/metadata"
MEMBER = "/images/{image_id}/metadata/{id}"

QUERY = Versioned.of(("2.1", schemas.QUERY_V21))
CREATE_BODY = Versioned.of(("2.1", schemas.CREATE_V21))
UPDATE_ALL_BODY = Versioned.of(("2.1", schemas.UPDATE_ALL_V21))
UPDATE_BODY = Versioned.of(("2.1", schemas.UPDATE_V21))


def register(table: RouteTable) -> None:
    """Add the image metadata routes to ``table``."""
    table.add("GET", COLLECTION, endpoint(handlers.list_metadata, until=UNTIL, query=QUERY))
    table.add("POST", COLLECTION, endpoint(handlers.create_metadata, until=UNTIL, body=CREATE_BODY))
    table.add(
        "PUT", COLLECTION, endpoint(handlers.replace_metadata, until=UNTIL, body=UPDATE_ALL_BODY)
    )
    table.add("GET", MEMBER, endpoint(handlers.show_metadata_item, until=UNTIL, query=QUERY))
    table.add("PUT", MEMBER, endpoint(handlers.update_metadata_item, until=UNTIL, body=UPDATE_BODY))
    table.add("DELETE", MEMBER, endpoint(handlers.delete_metadata_item, 204, until=UNTIL))
