"""Handlers of ``os-resetState`` (404, 403) and ``injectNetworkInfo`` (404, 403, 409 locked)."""

from __future__ import annotations

from openkeel.api.request import ApiRequest
from openkeel.api.usecases.server_actions import ServerActions

POLICY = "os_compute_api:os-admin-actions:%s"


def reset_state(req: ApiRequest) -> None:
    """os-resetState: vm_state active or error, task state cleared."""
    actions = ServerActions(req.services, req.context)
    found = actions.find(req.params["id"])
    actions.authorize(POLICY % "reset_state", found)
    actions.reset_state(found, req.body["os-resetState"]["state"])


def inject_network_info(req: ApiRequest) -> None:
    """injectNetworkInfo: cast to the server's compute host."""
    actions = ServerActions(req.services, req.context)
    found = actions.find(req.params["id"])
    actions.authorize(POLICY % "inject_network_info", found)
    actions.inject_network_info(found)
