"""Handlers of ``suspend`` and ``resume``: 404 unknown server, 403 policy, 409 locked or wrong
state, then the transition is cast to compute (202)."""

from __future__ import annotations

from openkeel.api.request import ApiRequest
from openkeel.api.usecases.server_actions import ServerActions

POLICY = "os_compute_api:os-suspend-server:%s"


def suspend_server(req: ApiRequest) -> None:
    """suspend (policy target: the server's project and user)."""
    actions = ServerActions(req.services, req.context)
    found = actions.find(req.params["id"])
    actions.authorize(POLICY % "suspend", found, with_user=True)
    actions.transition(found, "suspend")


def resume_server(req: ApiRequest) -> None:
    """resume (policy target: the server's project)."""
    actions = ServerActions(req.services, req.context)
    found = actions.find(req.params["id"])
    actions.authorize(POLICY % "resume", found)
    actions.transition(found, "resume")
