"""Request bodies of the pause and unpause actions (any value under the key; samples send null)."""

from __future__ import annotations

from typing import Any


def _action(key: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {key: {}},
        "required": [key],
        "additionalProperties": False,
    }


PAUSE_V21 = _action("pause")
UNPAUSE_V21 = _action("unpause")
