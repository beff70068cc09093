"""Request bodies of the remote console routes, as Nova's (each a delta of the one before).

The enums keep types Nova no longer serves (xvpvnc, rdp-html5): its schemas accept them and
the compute host refuses them.
"""

from __future__ import annotations

import copy
from typing import Any


def _legacy(action: str, types: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            action: {
                "type": "object",
                "properties": {"type": {"type": "string", "enum": types}},
                "required": ["type"],
                "additionalProperties": False,
            },
        },
        "required": [action],
        "additionalProperties": False,
    }


GET_VNC_CONSOLE = _legacy("os-getVNCConsole", ["novnc", "xvpvnc"])
GET_SPICE_CONSOLE = _legacy("os-getSPICEConsole", ["spice-html5"])
GET_SERIAL_CONSOLE = _legacy("os-getSerialConsole", ["serial"])

CREATE_V26: dict[str, Any] = {
    "type": "object",
    "properties": {
        "remote_console": {
            "type": "object",
            "properties": {
                "protocol": {"type": "string", "enum": ["vnc", "spice", "serial", "rdp"]},
                "type": {
                    "type": "string",
                    "enum": ["novnc", "xvpvnc", "spice-html5", "serial", "rdp-html5"],
                },
            },
            "required": ["protocol", "type"],
            "additionalProperties": False,
        },
    },
    "required": ["remote_console"],
    "additionalProperties": False,
}

CREATE_V28 = copy.deepcopy(CREATE_V26)
CREATE_V28["properties"]["remote_console"]["properties"]["protocol"]["enum"].append("mks")
CREATE_V28["properties"]["remote_console"]["properties"]["type"]["enum"].append("webmks")

CREATE_V299 = copy.deepcopy(CREATE_V28)
CREATE_V299["properties"]["remote_console"]["properties"]["type"]["enum"].append("spice-direct")
