"""/images proxy handlers: map Nova's query filters to the image service's, call the image
proxy use case, render the views. Registered by ``routes.py``."""

from __future__ import annotations

from typing import Any

from openkeel.api.request import ApiRequest
from openkeel.api.resources.images import views
from openkeel.api.usecases.images import ImageProxy

# Nova's filter names -> the image service's (``property-*`` pass through).
FILTERS = {
    "name": "name",
    "status": "status",
    "changes-since": "changes-since",
    "server": "property-instance_uuid",
    "type": "property-image_type",
    "minRam": "min_ram",
    "minDisk": "min_disk",
}


def _filters(req: ApiRequest) -> dict[str, str]:
    filters: dict[str, str] = {}
    for name, values in req.query.items():
        if values and (name in FILTERS or name.startswith("property-")):
            filters[FILTERS.get(name, name)] = values[-1]
    server = filters.get("property-instance_uuid")
    if server is not None and "/" in server:
        # A server link is accepted: keep its last segment, the uuid.
        filters["property-instance_uuid"] = server.rsplit("/", 1)[1]
    if "status" in filters:
        filters["status"] = filters["status"].lower()
    return filters


def _list(req: ApiRequest) -> list[Any]:
    limit = req.query_value("limit")
    return ImageProxy(req.services, req.context).list(
        _filters(req), int(limit) if limit else None, req.query_value("marker")
    )


def list_images(req: ApiRequest) -> dict[str, Any]:
    """GET /images: id, name and links."""
    return views.image_list(req, _list(req), detail=False)


def list_images_detail(req: ApiRequest) -> dict[str, Any]:
    """GET /images/detail."""
    return views.image_list(req, _list(req), detail=True)


def show_image(req: ApiRequest) -> dict[str, Any]:
    """GET /images/{id}."""
    image = ImageProxy(req.services, req.context).get(req.params["id"])
    return {"image": views.image_detail(req, image)}


def delete_image(req: ApiRequest) -> None:
    """DELETE /images/{id}."""
    ImageProxy(req.services, req.context).delete(req.params["id"])
