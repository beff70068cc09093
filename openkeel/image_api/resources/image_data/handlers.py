"""Handlers of /v2/images/{image_id}/file."""

from __future__ import annotations

from openkeel.image_api.faults import UnsupportedMediaType
from openkeel.image_api.request import ImageRequest, Reply
from openkeel.image_api.usecases import image_data


def upload_image_data(req: ImageRequest) -> Reply:
    """PUT /v2/images/{image_id}/file (``application/octet-stream``): 204 once active."""
    if req.content_type() != "application/octet-stream":
        raise UnsupportedMediaType("Image data must be sent as application/octet-stream.")
    assert req.chunks is not None  # a streaming endpoint
    image_data.upload(req.services, req.caller, req.params["image_id"], req.chunks)
    return Reply(status=204)


def download_image_data(req: ImageRequest) -> Reply:
    """GET /v2/images/{image_id}/file: the bytes, or 204 when the image has none."""
    image, data = image_data.download(req.services, req.caller, req.params["image_id"])
    if data is None:
        return Reply(status=204)
    headers = [("Content-Length", str(image.size or 0))]
    if image.checksum:
        headers.append(("Content-MD5", image.checksum))
    return Reply(status=200, headers=headers, stream=data)
