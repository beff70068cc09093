"""Handlers of the remote console routes (200; 400 unavailable or invalid type, 404, 409 no
host or a deleting/migrating server, 501 a driver without that console)."""

from __future__ import annotations

from typing import Any

from openkeel.api.request import ApiRequest
from openkeel.api.usecases.remote_consoles import legacy_console, remote_console

LEGACY_ACTIONS = {
    "os-getVNCConsole": "vnc",
    "os-getSPICEConsole": "spice",
    "os-getSerialConsole": "serial",
}


def create_remote_console(req: ApiRequest) -> dict[str, Any]:
    """POST /servers/{server_id}/remote-consoles."""
    body = req.body["remote_console"]
    protocol, console_type = body["protocol"], body["type"]
    url = remote_console(req.services, req.context, req.params["server_id"], protocol,
                         console_type)  # fmt: skip
    return {"remote_console": {"protocol": protocol, "type": console_type, "url": url}}


def get_legacy_console(req: ApiRequest) -> dict[str, Any]:
    """POST /servers/{id}/action ``os-getVNCConsole`` / ``os-getSPICEConsole`` /
    ``os-getSerialConsole``: ``{"console": {"type", "url"}}``."""
    (action,) = req.body
    console_type = req.body[action].get("type")
    url = legacy_console(req.services, req.context, req.params["id"], LEGACY_ACTIONS[action],
                         console_type)  # fmt: skip
    return {"console": {"type": console_type, "url": url}}
