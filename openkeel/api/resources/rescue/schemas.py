"""Request bodies of rescue (an object or null; adminPass, rescue_image_ref) and unrescue."""

from __future__ import annotations

from typing import Any

from openkeel.api.resources.servers.schema_types import ADMIN_PASSWORD, UUID

RESCUE_V21: dict[str, Any] = {
    "type": "object",
    "properties": {
        "rescue": {
            "type": ["object", "null"],
            "properties": {"adminPass": ADMIN_PASSWORD, "rescue_image_ref": UUID},
            "additionalProperties": False,
        }
    },
    "required": ["rescue"],
    "additionalProperties": False,
}
UNRESCUE_V21: dict[str, Any] = {
    "type": "object",
    "properties": {"unrescue": {}},
    "required": ["unrescue"],
    "additionalProperties": False,
}
