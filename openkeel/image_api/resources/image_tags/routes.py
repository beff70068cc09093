"""Routes of /v2/images/{image_id}/tags/{tag}."""

from __future__ import annotations

from openkeel.image_api.request import Endpoint, RouteTable
from openkeel.image_api.resources.image_tags import handlers

TAG = "/v2/images/{image_id}/tags/{tag}"


def register(table: RouteTable) -> None:
    """Add the tag routes to ``table``."""
    table.add("PUT", TAG, Endpoint(handlers.add_image_tag))
    table.add("DELETE", TAG, Endpoint(handlers.delete_image_tag))
