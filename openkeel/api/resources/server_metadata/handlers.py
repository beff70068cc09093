"""Server metadata handlers: call the server metadata use case, render the view. Registered
by ``routes.py``."""

from __future__ import annotations

from typing import Any

from openkeel.api.request import ApiRequest
from openkeel.api.resources.server_metadata import views
from openkeel.api.usecases.server_metadata import ServerMetadataService


def _service(req: ApiRequest) -> ServerMetadataService:
    return ServerMetadataService(req.services, req.context)


def list_server_metadata(req: ApiRequest) -> dict[str, Any]:
    """GET /servers/{server_id}/metadata."""
    return views.metadata(_service(req).list(req.params["server_id"]))


def create_server_metadata(req: ApiRequest) -> dict[str, Any]:
    """POST /servers/{server_id}/metadata (merge; 200 as Nova)."""
    merged = _service(req).merge(req.params["server_id"], req.body["metadata"])
    return views.metadata(merged)


def replace_server_metadata(req: ApiRequest) -> dict[str, Any]:
    """PUT /servers/{server_id}/metadata (replace all)."""
    replaced = _service(req).replace(req.params["server_id"], req.body["metadata"])
    return views.metadata(replaced)


def show_server_metadata_item(req: ApiRequest) -> dict[str, Any]:
    """GET /servers/{server_id}/metadata/{id}."""
    return views.meta(_service(req).show(req.params["server_id"], req.params["id"]))


def update_server_metadata_item(req: ApiRequest) -> dict[str, Any]:
    """PUT /servers/{server_id}/metadata/{id}."""
    item = _service(req).set_item(req.params["server_id"], req.params["id"], req.body["meta"])
    return views.meta(item)


def delete_server_metadata_item(req: ApiRequest) -> None:
    """DELETE /servers/{server_id}/metadata/{id}."""
    _service(req).delete_item(req.params["server_id"], req.params["id"])
