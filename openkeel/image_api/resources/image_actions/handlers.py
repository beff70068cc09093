"""Handlers of /v2/images/{image_id}/actions/*."""

from __future__ import annotations

from openkeel.image_api.request import ImageRequest, Reply
from openkeel.image_api.usecases import images


def deactivate_image(req: ImageRequest) -> Reply:
    """POST .../actions/deactivate: 204."""
    images.set_active(req.services, req.caller, req.params["image_id"], active=False)
    return Reply(status=204)


def reactivate_image(req: ImageRequest) -> Reply:
    """POST .../actions/reactivate: 204."""
    images.set_active(req.services, req.caller, req.params["image_id"], active=True)
    return Reply(status=204)
