"""os-instance-actions handlers: read the microversion-dependent inputs, call the instance
actions use case, render the view. Registered by ``routes.py``."""

from __future__ import annotations

from typing import Any

from openkeel.api.request import ApiRequest
from openkeel.api.resources.instance_actions import views
from openkeel.api.usecases.instance_actions import ActionPage, InstanceActionService, parse_time


def _service(req: ApiRequest) -> InstanceActionService:
    return InstanceActionService(req.services, req.context)


def _page(req: ApiRequest, max_limit: int) -> ActionPage | None:
    if not req.at_least("2.58"):
        return None
    limit = req.query_value("limit")
    since = req.query_value("changes-since")
    before = req.query_value("changes-before")
    return ActionPage(
        limit=min(int(limit), max_limit) if limit is not None else max_limit,
        marker=req.query_value("marker"),
        changes_since=parse_time(since) if since is not None else None,
        changes_before=parse_time(before) if before is not None else None,
    )


def list_instance_actions(req: ApiRequest) -> dict[str, Any]:
    """GET /servers/{server_id}/os-instance-actions."""
    server_id = req.params["server_id"]
    max_limit = int(req.services.conf.api.max_limit)
    actions = _service(req).list_actions(
        server_id, with_deleted=req.at_least("2.21"), page=_page(req, max_limit)
    )
    return views.action_list(req, server_id, actions, max_limit)


def show_instance_action(req: ApiRequest) -> dict[str, Any]:
    """GET /servers/{server_id}/os-instance-actions/{id}."""
    detail = _service(req).show_action(
        req.params["server_id"],
        req.params["id"],
        with_deleted=req.at_least("2.21"),
        version_at=req.at_least,
    )
    return views.action_detail(req, detail)
