"""Handlers of ``/os-services``: list, update (pre-2.53 actions and 2.53 by uuid), delete."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from openkeel.api.request import ApiRequest, Reply
from openkeel.api.resources.services import views
from openkeel.api.usecases.services import (
    COMPUTE,
    ServiceAdmin,
    is_uuid_like,
    update_not_supported,
)
from openkeel.domain.errors import Invalid, NotFound

POLICY = "os_compute_api:os-services:%s"
_TRUE = frozenset({"1", "t", "true", "on", "y", "yes"})


def _truthy(value: object) -> bool:
    return value is True or (isinstance(value, str) and value.strip().lower() in _TRUE)


def list_services(req: ApiRequest) -> dict[str, Any]:
    """Every service but the API ones, filtered by ``host`` and ``binary``."""
    req.context.can(POLICY % "list", target={})
    admin = ServiceAdmin(req.services)
    return views.collection(req, admin.listing(req.query_value("host"), req.query_value("binary")))


def update_service(req: ApiRequest) -> dict[str, Any]:
    """``PUT /os-services/{id}``: an action name before 2.53, a service uuid after."""
    if req.at_least("2.53"):
        return _update_by_uuid(req)
    req.context.can(POLICY % "update", target={})
    actions: dict[str, Callable[[ServiceAdmin, dict[str, Any]], dict[str, Any]]] = {
        "enable": _enable,
        "disable": _disable,
        "disable-log-reason": _disable_log_reason,
    }
    if req.at_least("2.11"):
        actions["force-down"] = _force_down
    action = actions.get(req.params["id"])
    if action is None:
        raise NotFound("Unknown action")
    return action(ServiceAdmin(req.services), req.body)


def _set_status(
    admin: ServiceAdmin, body: dict[str, Any], disabled: bool, reason: str | None
) -> dict[str, Any]:
    reply = views.status_change(
        body["host"], body["binary"], "disabled" if disabled else "enabled", reason
    )
    values = {"disabled": disabled, "disabled_reason": reason}
    admin.update_by_host(body["host"], body["binary"], values)
    return reply


def _enable(admin: ServiceAdmin, body: dict[str, Any]) -> dict[str, Any]:
    return _set_status(admin, body, False, None)


def _disable(admin: ServiceAdmin, body: dict[str, Any]) -> dict[str, Any]:
    return _set_status(admin, body, True, None)


def _disable_log_reason(admin: ServiceAdmin, body: dict[str, Any]) -> dict[str, Any]:
    if "disabled_reason" not in body:
        raise Invalid("Missing disabled reason field")
    return _set_status(admin, body, True, body["disabled_reason"])


def _force_down(admin: ServiceAdmin, body: dict[str, Any]) -> dict[str, Any]:
    if "forced_down" not in body:
        raise Invalid("Missing forced_down field")
    forced_down = _truthy(body["forced_down"])
    host, binary = body["host"], body["binary"]
    if binary == COMPUTE and not forced_down:
        admin.check_force_up(host)
    reply = views.forced_down_change(host, binary, forced_down)
    admin.update_by_host(host, binary, {"forced_down": forced_down})
    return reply


def _changes(body: dict[str, Any]) -> dict[str, Any]:
    changes: dict[str, Any] = {}
    if body.get("status") == "enabled":
        if body.get("disabled_reason"):
            raise Invalid("Specifying 'disabled_reason' with status 'enabled' is invalid.")
        changes = {"disabled": False, "disabled_reason": None}
    elif body.get("status") == "disabled":
        changes = {"disabled": True, "disabled_reason": body.get("disabled_reason")}
    if "forced_down" in body:
        changes["forced_down"] = _truthy(body["forced_down"])
    return changes


def _update_by_uuid(req: ApiRequest) -> dict[str, Any]:
    service_id = req.params["id"]
    if not is_uuid_like(service_id):
        raise Invalid(f"Invalid uuid {service_id}")
    req.context.can(POLICY % "update", target={})
    admin = ServiceAdmin(req.services)
    located = admin.find(service_id)
    service = located.record
    if service.binary != COMPUTE:
        raise update_not_supported(service.binary)
    changes = _changes(req.body)
    if changes.get("forced_down") is False:
        admin.check_force_up(service.host)
    if not changes:
        raise Invalid(
            "No updates were requested. Fields 'status' or 'forced_down' should be specified."
        )
    fresh = admin.update(located, changes)
    return {"service": views.detail(req, admin.state(fresh), with_forced_down=True)}


def delete_service(req: ApiRequest) -> Reply:
    """``DELETE /os-services/{id}`` (uuid from 2.53, integer id before)."""
    req.context.can(POLICY % "delete", target={})
    service_id = req.params["id"]
    if req.at_least("2.53"):
        if not is_uuid_like(service_id):
            raise Invalid(f"Invalid uuid {service_id}")
    else:
        try:
            service_id = str(int(service_id))
        except ValueError:
            raise Invalid("Invalid input received: id must be an integer") from None
    ServiceAdmin(req.services).delete(service_id)
    return Reply(None, 204)
