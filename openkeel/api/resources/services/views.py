"""Response bodies of ``/os-services`` per microversion."""

from __future__ import annotations

from typing import Any

from openkeel.api.request import ApiRequest
from openkeel.api.usecases.services import ServiceState

TIME_FORMAT = "%Y-%m-%dT%H:%M:%S.%f"


def detail(req: ApiRequest, state: ServiceState, with_forced_down: bool) -> dict[str, Any]:
    """One service as the list (and the 2.53 update) shows it."""
    svc = state.record
    body: dict[str, Any] = {
        "binary": svc.binary,
        "host": svc.host,
        "id": svc.uuid if req.at_least("2.53") else svc.id,
        "zone": state.zone,
        "status": "disabled" if svc.disabled else "enabled",
        "state": "up" if state.up else "down",
        "updated_at": svc.updated_at.strftime(TIME_FORMAT) if svc.updated_at else None,
        "disabled_reason": svc.disabled_reason,
    }
    if with_forced_down:
        body["forced_down"] = svc.forced_down
    return body


def collection(req: ApiRequest, states: list[ServiceState]) -> dict[str, Any]:
    """``{"services": [...]}`` (``forced_down`` from 2.11)."""
    return {"services": [detail(req, s, req.at_least("2.11")) for s in states]}


def status_change(host: str, binary: str, status: str, reason: str | None) -> dict[str, Any]:
    """The body of the pre-2.53 enable / disable / disable-log-reason actions."""
    body: dict[str, Any] = {"host": host, "binary": binary, "status": status}
    if reason:
        body["disabled_reason"] = reason
    return {"service": body}


def forced_down_change(host: str, binary: str, forced_down: bool) -> dict[str, Any]:
    """The body of the pre-2.53 force-down action."""
    return {"service": {"host": host, "binary": binary, "forced_down": forced_down}}
