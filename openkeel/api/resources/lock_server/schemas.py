"""Request bodies of lock and unlock, per microversion (Nova's constraints, reproduced).

Before 2.73 any value goes under ``lock``; 2.73 takes null or ``{"locked_reason": ...}``.
``unlock`` is validated up to 2.72 only, as in Nova.
"""

from __future__ import annotations

from typing import Any

LOCK_V21: dict[str, Any] = {
    "type": "object",
    "properties": {"lock": {}},
    "required": ["lock"],
    "additionalProperties": False,
}
LOCK_V273: dict[str, Any] = {
    "type": "object",
    "properties": {
        "lock": {
            "type": ["object", "null"],
            "properties": {
                "locked_reason": {"type": "string", "minLength": 1, "maxLength": 255},
            },
            "additionalProperties": False,
        },
    },
    "required": ["lock"],
    "additionalProperties": False,
}
UNLOCK_V21: dict[str, Any] = {
    "type": "object",
    "properties": {"unlock": {}},
    "required": ["unlock"],
    "additionalProperties": False,
}
