"""Request bodies of os-resetState and injectNetworkInfo (Nova's constraints, reproduced)."""

from __future__ import annotations

from typing import Any

INJECT_NETWORK_INFO_V21: dict[str, Any] = {
    "type": "object",
    "properties": {"injectNetworkInfo": {}},
    "required": ["injectNetworkInfo"],
    "additionalProperties": False,
}
RESET_STATE_V21: dict[str, Any] = {
    "type": "object",
    "properties": {
        "os-resetState": {
            "type": "object",
            "properties": {"state": {"type": "string", "enum": ["active", "error"]}},
            "required": ["state"],
            "additionalProperties": False,
        },
    },
    "required": ["os-resetState"],
    "additionalProperties": False,
}
