"""Handlers of ``pause`` and ``unpause``: 404 unknown server, 403 policy, 409 locked or wrong
state, then the transition is cast to compute (202)."""

from __future__ import annotations

from openkeel.api.request import ApiRequest
from openkeel.api.usecases.server_actions import ServerActions

POLICY = "os_compute_api:os-pause-server:%s"


def pause_server(req: ApiRequest) -> None:
    """pause (policy target: the server's project and user)."""
    actions = ServerActions(req.services, req.context)
    found = actions.find(req.params["id"])
    actions.authorize(POLICY % "pause", found, with_user=True)
    actions.transition(found, "pause")


def unpause_server(req: ApiRequest) -> None:
    """unpause (policy target: the server's project)."""
    actions = ServerActions(req.services, req.context)
    found = actions.find(req.params["id"])
    actions.authorize(POLICY % "unpause", found)
    actions.transition(found, "unpause")
