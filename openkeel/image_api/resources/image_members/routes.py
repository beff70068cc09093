"""Routes of /v2/images/{image_id}/members."""

from __future__ import annotations

from openkeel.image_api.request import Endpoint, RouteTable
from openkeel.image_api.resources.image_members import handlers

COLLECTION = "/v2/images/{image_id}/members"
MEMBER = "/v2/images/{image_id}/members/{member_id}"


def register(table: RouteTable) -> None:
    """Add the member routes to ``table``."""
    table.add("GET", COLLECTION, Endpoint(handlers.list_image_members))
    table.add("POST", COLLECTION, Endpoint(handlers.create_image_member))
    table.add("GET", MEMBER, Endpoint(handlers.show_image_member))
    table.add("PUT", MEMBER, Endpoint(handlers.update_image_member))
    table.add("DELETE", MEMBER, Endpoint(handlers.delete_image_member))
