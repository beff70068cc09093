"""Handlers of ``lock`` and ``unlock``: 404 unknown server, 403 policy; unlocking a lock set
by the other party (owner vs admin) also needs ``unlock:unlock_override``."""

from __future__ import annotations

from typing import Any

from openkeel.api.request import ApiRequest
from openkeel.api.usecases.server_actions import ServerActions

POLICY = "os_compute_api:os-lock-server:%s"


def _reason(req: ApiRequest) -> str | None:
    if not req.at_least("2.73"):
        return None
    lock: Any = req.body["lock"]
    return lock.get("locked_reason") if isinstance(lock, dict) else None


def lock_server(req: ApiRequest) -> None:
    """lock (policy target: the server's project and user)."""
    actions = ServerActions(req.services, req.context)
    found = actions.find(req.params["id"])
    actions.authorize(POLICY % "lock", found, with_user=True)
    actions.lock(found, _reason(req))


def unlock_server(req: ApiRequest) -> None:
    """unlock (policy target: the server's project)."""
    actions = ServerActions(req.services, req.context)
    found = actions.find(req.params["id"])
    actions.authorize(POLICY % "unlock", found)
    if not actions.is_expected_locked_by(found):
        actions.authorize(POLICY % "unlock:unlock_override", found)
    actions.unlock(found)
