"""``PUT /servers/{id}`` body schemas and the server action bodies handled by this package."""

from __future__ import annotations

import copy
from typing import Any

from openkeel.api.resources.servers import schema_types as t

UPDATE_V21: dict[str, Any] = {
    "type": "object",
    "properties": {
        "server": {
            "type": "object",
            "properties": {
                "name": t.NAME,
                "OS-DCF:diskConfig": t.DISK_CONFIG,
                "accessIPv4": t.ACCESS_IPV4,
                "accessIPv6": t.ACCESS_IPV6,
            },
            "additionalProperties": False,
        }
    },
    "required": ["server"],
    "additionalProperties": False,
}


def _derive(base: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    copied = copy.deepcopy(base)
    return copied, copied["properties"]["server"]["properties"]


UPDATE_V20, _p = _derive(UPDATE_V21)
_p["name"] = t.NAME_V20

UPDATE_V219, _p = _derive(UPDATE_V21)
_p["description"] = t.DESCRIPTION

UPDATE_V290, _p = _derive(UPDATE_V219)
_p["hostname"] = t.HOSTNAME

UPDATE_V294, _p = _derive(UPDATE_V290)
_p["hostname"] = t.FQDN

UPDATE_V2104, _p = _derive(UPDATE_V294)
_p["pinned_availability_zone"] = t.NAME_OR_NONE
del _p


def _empty_action(key: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {key: {}},
        "required": [key],
        "additionalProperties": False,
    }


START = _empty_action("os-start")
STOP = _empty_action("os-stop")
FORCE_DELETE = _empty_action("forceDelete")
RESTORE = _empty_action("restore")
REBOOT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "reboot": {
            "type": "object",
            "properties": {
                "type": {"type": "string", "enum": ["HARD", "Hard", "hard", "SOFT", "Soft", "soft"]}
            },
            "required": ["type"],
            "additionalProperties": False,
        }
    },
    "required": ["reboot"],
    "additionalProperties": False,
}
