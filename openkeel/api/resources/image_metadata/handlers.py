"""/images/{image_id}/metadata handlers: the image's properties through the image proxy."""

from __future__ import annotations

from typing import Any

from openkeel.api.request import ApiRequest
from openkeel.api.usecases.images import ImageProxy
from openkeel.domain.errors import Invalid, NotFound


def _proxy(req: ApiRequest) -> ImageProxy:
    return ImageProxy(req.services, req.context)


def list_metadata(req: ApiRequest) -> dict[str, Any]:
    """GET .../metadata."""
    return {"metadata": _proxy(req).metadata(req.params["image_id"])}


def show_metadata_item(req: ApiRequest) -> dict[str, Any]:
    """GET .../metadata/{id}: Nova's bare 404 when the key is absent."""
    metadata = _proxy(req).metadata(req.params["image_id"])
    key = req.params["id"]
    if key not in metadata:
        raise NotFound("The resource could not be found.")
    return {"meta": {key: metadata[key]}}


def create_metadata(req: ApiRequest) -> dict[str, Any]:
    """POST .../metadata: merge the given items."""
    items = req.body["metadata"]
    return {"metadata": _proxy(req).set_metadata(req.params["image_id"], items, replace=False)}


def replace_metadata(req: ApiRequest) -> dict[str, Any]:
    """PUT .../metadata: replace every item; answers the request's items."""
    items = req.body["metadata"]
    _proxy(req).set_metadata(req.params["image_id"], items, replace=True)
    return {"metadata": items}


def update_metadata_item(req: ApiRequest) -> dict[str, Any]:
    """PUT .../metadata/{id}: set one item; the body's key must be the URL's."""
    meta = req.body["meta"]
    key = req.params["id"]
    if key not in meta:
        raise Invalid("Request body and URI mismatch")
    _proxy(req).set_metadata(req.params["image_id"], {key: meta[key]}, replace=False)
    return {"meta": meta}


def delete_metadata_item(req: ApiRequest) -> None:
    """DELETE .../metadata/{id}."""
    _proxy(req).delete_metadata(req.params["image_id"], req.params["id"])
