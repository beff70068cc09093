"""Handlers of /v2/images/{image_id}/tags/{tag} (the ASGI path is already percent-decoded)."""

from __future__ import annotations

from openkeel.image_api.request import ImageRequest, Reply
from openkeel.image_api.usecases import images


def add_image_tag(req: ImageRequest) -> Reply:
    """PUT /v2/images/{image_id}/tags/{tag}: 204."""
    images.add_tag(req.services, req.caller, req.params["image_id"], req.params["tag"])
    return Reply(status=204)


def delete_image_tag(req: ImageRequest) -> Reply:
    """DELETE /v2/images/{image_id}/tags/{tag}: 204, 404 when absent."""
    images.remove_tag(req.services, req.caller, req.params["image_id"], req.params["tag"])
    return Reply(status=204)
