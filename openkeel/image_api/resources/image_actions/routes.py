"""Routes of /v2/images/{image_id}/actions/*."""

from __future__ import annotations

from openkeel.image_api.request import Endpoint, RouteTable
from openkeel.image_api.resources.image_actions import handlers


def register(table: RouteTable) -> None:
    """Add the image action routes to ``table``."""
    table.add(
        "POST", "/v2/images/{image_id}/actions/deactivate", Endpoint(handlers.deactivate_image)
    )
    table.add(
        "POST", "/v2/images/{image_id}/actions/reactivate", Endpoint(handlers.reactivate_image)
    )
