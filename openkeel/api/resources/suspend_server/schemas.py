"""Request bodies of the suspend and resume actions (any value under the key; samples send null)."""

from __future__ import annotations

from typing import Any


def _action(key: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {key: {}},
        "required": [key],
        "additionalProperties": False,
    }


SUSPEND_V21 = _action("suspend")
RESUME_V21 = _action("resume")
