"""Routes of /v2/images."""

from __future__ import annotations

from openkeel.image_api.request import Endpoint, RouteTable
from openkeel.image_api.resources.images import handlers

COLLECTION = "/v2/images"
MEMBER = "/v2/images/{image_id}"


def register(table: RouteTable) -> None:
    """Add the image routes to ``table``."""
    table.add("GET", COLLECTION, Endpoint(handlers.list_images))
    table.add("POST", COLLECTION, Endpoint(handlers.create_image))
    table.add("GET", MEMBER, Endpoint(handlers.show_image))
    table.add("PATCH", MEMBER, Endpoint(handlers.update_image))
    table.add("DELETE", MEMBER, Endpoint(handlers.delete_image))
    table.add("GET", f"{MEMBER}/tasks", Endpoint(handlers.list_image_tasks))
