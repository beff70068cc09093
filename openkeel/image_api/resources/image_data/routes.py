"""Routes of /v2/images/{image_id}/file."""

from __future__ import annotations

from openkeel.image_api.request import Endpoint, RouteTable
from openkeel.image_api.resources.image_data import handlers

FILE = "/v2/images/{image_id}/file"


def register(table: RouteTable) -> None:
    """Add the image data routes to ``table``."""
    table.add("PUT", FILE, Endpoint(handlers.upload_image_data, streams_body=True))
    table.add("GET", FILE, Endpoint(handlers.download_image_data))
