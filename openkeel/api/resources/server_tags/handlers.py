"""Server tags handlers: call the server tags use case, render the view. Registered by
``routes.py``."""

from __future__ import annotations

from typing import Any

from openkeel.api.request import ApiRequest, Reply
from openkeel.api.resources.server_tags import views
from openkeel.api.usecases.server_tags import ServerTagService


def _service(req: ApiRequest) -> ServerTagService:
    return ServerTagService(req.services, req.context)


def list_server_tags(req: ApiRequest) -> dict[str, Any]:
    """GET /servers/{server_id}/tags."""
    return views.tags(_service(req).list_tags(req.params["server_id"]))


def replace_server_tags(req: ApiRequest) -> dict[str, Any]:
    """PUT /servers/{server_id}/tags."""
    return views.tags(_service(req).replace(req.params["server_id"], req.body["tags"]))


def delete_server_tags(req: ApiRequest) -> None:
    """DELETE /servers/{server_id}/tags."""
    _service(req).delete_all(req.params["server_id"])


def check_server_tag(req: ApiRequest) -> None:
    """GET /servers/{server_id}/tags/{id}: 204 when present."""
    _service(req).check(req.params["server_id"], req.params["id"])


def add_server_tag(req: ApiRequest) -> Reply:
    """PUT /servers/{server_id}/tags/{id}: 201 + Location when added, 204 when present."""
    server_id, tag = req.params["server_id"], req.params["id"]
    if not _service(req).add(server_id, tag):
        return Reply(None, 204)
    return Reply(None, 201, [("Location", views.location(req, server_id, tag))])


def delete_server_tag(req: ApiRequest) -> None:
    """DELETE /servers/{server_id}/tags/{id}."""
    _service(req).delete(req.params["server_id"], req.params["id"])
