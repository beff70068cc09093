"""Handlers of /v2/images: parse, call the use case, shape the answer."""

from __future__ import annotations

from urllib.parse import urlencode

from openkeel.image_api.faults import UnsupportedMediaType
from openkeel.image_api.request import ImageRequest, Reply
from openkeel.image_api.resources.images.views import image_view
from openkeel.image_api.usecases import images, listing, patching

PATCH_TYPE = "application/openstack-images-v2.1-json-patch"
DRAFT4_PATCH_TYPE = "application/openstack-images-v2.0-json-patch"
ACCEPT_PATCH = f"{DRAFT4_PATCH_TYPE}, {PATCH_TYPE}"


def list_images(req: ImageRequest) -> Reply:
    """GET /v2/images."""
    page = listing.list_images(req.services, req.caller, req.query)
    body = {
        "images": [image_view(image) for image in page.images],
        "first": "/v2/images",
        "schema": "/v2/schemas/images",
    }
    if page.next_query is not None:
        body["next"] = f"/v2/images?{urlencode(page.next_query)}"
    return Reply(body)


def create_image(req: ImageRequest) -> Reply:
    """POST /v2/images: 201 and the queued image."""
    image = images.create(req.services, req.caller, req.json())
    return Reply(image_view(image), 201, [("Location", f"{req.base}/v2/images/{image.id}")])


def show_image(req: ImageRequest) -> Reply:
    """GET /v2/images/{image_id}."""
    return Reply(image_view(images.find(req.services, req.caller, req.params["image_id"])))


def list_image_tasks(req: ImageRequest) -> Reply:
    """GET /v2/images/{image_id}/tasks (Glance 2.12): the image's import tasks. The embedded
    service runs none (no interoperable import, decision 0034), so the list is empty; clients
    such as tempest wait on it after a snapshot upload."""
    images.find(req.services, req.caller, req.params["image_id"])  # 404 as show
    return Reply({"tasks": []})


def update_image(req: ImageRequest) -> Reply:
    """PATCH /v2/images/{image_id} with a v2.1 JSON patch (or a v2.0 one, draft 4)."""
    kind = req.content_type()
    if kind not in (PATCH_TYPE, DRAFT4_PATCH_TYPE):
        raise UnsupportedMediaType(
            f"Image PATCH expects Content-Type one of: {ACCEPT_PATCH}",
            (("Accept-Patch", ACCEPT_PATCH),),
        )
    ops = req.json() if kind == PATCH_TYPE else patching.from_draft4(req.json())
    image = images.update(req.services, req.caller, req.params["image_id"], ops)
    return Reply(image_view(image))


def delete_image(req: ImageRequest) -> Reply:
    """DELETE /v2/images/{image_id}: 204."""
    images.delete(req.services, req.caller, req.params["image_id"])
    return Reply(status=204)
