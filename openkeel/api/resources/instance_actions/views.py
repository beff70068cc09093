"""Response bodies of os-instance-actions per microversion: ``updated_at`` and the ``links``
of a full page from 2.58; events (2.51 for non-admins, without traceback), ``host`` (admins)
and ``hostId`` from 2.62, ``details`` from 2.84."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from openkeel.api.request import ApiRequest
from openkeel.api.usecases.instance_actions import ActionDetail
from openkeel.domain.actions import ActionEvent, InstanceAction

TIME_FORMAT = "%Y-%m-%dT%H:%M:%S.%f"


def _time(value: datetime | None) -> str | None:
    return value.strftime(TIME_FORMAT) if value is not None else None


def _host_id(host: str | None, project_id: str) -> str:
    # Nova's obfuscated host id: sha224 of project + host; "" without a host.
    if not host:
        return ""
    return hashlib.sha224((project_id + host).encode("utf-8")).hexdigest()


def _action(action: InstanceAction, modern: bool) -> dict[str, Any]:
    body: dict[str, Any] = {
        "action": action.action,
        "instance_uuid": action.instance_uuid,
        "request_id": action.request_id,
        "user_id": action.user_id,
        "project_id": action.project_id,
        "start_time": _time(action.start_time),
        "message": action.message,
    }
    if modern:
        body["updated_at"] = _time(action.updated_at)
    return body


def _event(req: ApiRequest, event: ActionEvent, detail: ActionDetail) -> dict[str, Any]:
    body: dict[str, Any] = {
        "event": event.event,
        "start_time": _time(event.start_time),
        "finish_time": _time(event.finish_time),
        "result": event.result,
    }
    if detail.view.traceback:
        body["traceback"] = event.traceback
    if detail.view.host:
        body["host"] = event.host
    if req.at_least("2.62"):
        project = detail.action.project_id or detail.instance_project_id
        body["hostId"] = _host_id(event.host, project)
    if detail.details:
        body["details"] = event.details
    return body


def action_list(
    req: ApiRequest, server_id: str, actions: Sequence[InstanceAction], max_limit: int
) -> dict[str, Any]:
    """``{"instanceActions": [...]}`` (+ ``links`` from 2.58 when the page is full)."""
    modern = req.at_least("2.58")
    body: dict[str, Any] = {"instanceActions": [_action(a, modern) for a in actions]}
    if modern:
        limit = req.query_value("limit")
        page_size = min(int(limit), max_limit) if limit is not None else max_limit
        if page_size and page_size == len(actions):
            path = f"servers/{server_id}/os-instance-actions"
            body["links"] = [{"rel": "next", "href": _next_href(req, path, actions[-1].request_id)}]
    return body


def _next_href(req: ApiRequest, path: str, marker: str) -> str:
    # Nova sorts the (name, value) pairs, keeps the last value per name, then sets the marker.
    params: dict[str, str] = {}
    for name, value in sorted((k, v) for k, vals in req.query.items() for v in vals):
        params[name] = value
    params["marker"] = marker
    return f"{req.self_link(path)}?{urlencode(params)}"


def action_detail(req: ApiRequest, detail: ActionDetail) -> dict[str, Any]:
    """``{"instanceAction": {...}}`` with ``events`` when visible."""
    body = _action(detail.action, req.at_least("2.58"))
    if detail.events is not None:
        body["events"] = [_event(req, e, detail) for e in detail.events]
    return {"instanceAction": body}
