"""Routes of os-admin-password: ``changePassword`` on ``/servers/{id}/action``."""

from __future__ import annotations

from typing import Any

from openkeel.api.resources.admin_password import handlers
from openkeel.api.resources.servers.schema_types import ADMIN_PASSWORD
from openkeel.api.routing import RouteTable, endpoint
from openkeel.api.validation import Versioned

ACTION = "/servers/{id}/action"
CHANGE_PASSWORD_V21: dict[str, Any] = {
    "type": "object",
    "properties": {
        "changePassword": {
            "type": "object",
            "properties": {"adminPass": ADMIN_PASSWORD},
            "required": ["adminPass"],
            "additionalProperties": False,
        }
    },
    "required": ["changePassword"],
    "additionalProperties": False,
}


def register(table: RouteTable) -> None:
    """Add the changePassword action (202)."""
    body = Versioned.of(("2.0", CHANGE_PASSWORD_V21))
    ep = endpoint(handlers.change_password, status=202, body=body, policy=handlers.POLICY)
    table.add_action(ACTION, "changePassword", ep)
