"""Routes of /v2/schemas/*."""

from __future__ import annotations

from openkeel.image_api.request import Endpoint, RouteTable
from openkeel.image_api.resources.schemas import handlers


def register(table: RouteTable) -> None:
    """Add the schema routes to ``table``."""
    table.add("GET", "/v2/schemas/image", Endpoint(handlers.show_image_schema))
    table.add("GET", "/v2/schemas/images", Endpoint(handlers.show_images_schema))
    table.add("GET", "/v2/schemas/member", Endpoint(handlers.show_member_schema))
    table.add("GET", "/v2/schemas/members", Endpoint(handlers.show_members_schema))
