"""os-server-groups handlers: read the microversion-dependent inputs, call the server group
use case, render the view. Registered by ``routes.py``."""

from __future__ import annotations

from typing import Any

from openkeel.api.request import ApiRequest
from openkeel.api.resources.server_groups import views
from openkeel.api.usecases.server_groups import CreateServerGroup, Page, ServerGroupService


def _service(req: ApiRequest) -> ServerGroupService:
    return ServerGroupService(req.services, req.context)


def _render(req: ApiRequest) -> tuple[bool, bool]:
    return req.at_least("2.64"), req.at_least("2.13")


def _int(req: ApiRequest, name: str) -> int | None:
    value = req.query_value(name)
    return int(value) if value is not None else None


def list_server_groups(req: ApiRequest) -> dict[str, Any]:
    """GET /os-server-groups."""
    page = Page(offset=_int(req, "offset") or 0, limit=_int(req, "limit"))
    groups = _service(req).list_groups("all_projects" in req.query, page)
    return views.server_group_list(groups, *_render(req))


def show_server_group(req: ApiRequest) -> dict[str, Any]:
    """GET /os-server-groups/{id}."""
    return views.server_group_detail(_service(req).get(req.params["id"]), *_render(req))


def delete_server_group(req: ApiRequest) -> None:
    """DELETE /os-server-groups/{id}."""
    _service(req).delete(req.params["id"])


def create_server_group(req: ApiRequest) -> dict[str, Any]:
    """POST /os-server-groups."""
    params = req.body["server_group"]
    if req.at_least("2.64"):
        command = CreateServerGroup(params["name"], params["policy"], params.get("rules", {}))
    else:
        command = CreateServerGroup(params["name"], params["policies"][0], legacy=True)
    created = _service(req).create(command)
    return views.server_group_detail(created, *_render(req))
