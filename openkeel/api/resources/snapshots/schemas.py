"""Request schemas of the ``os-snapshots`` proxy (Nova 34.0.0's, written out)."""

from __future__ import annotations

from typing import Any

from openkeel.api.resources.servers import schema_types as t

_TEXT: dict[str, Any] = {"type": "string"}
CREATE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "snapshot": {
            "type": "object",
            "properties": {
                "volume_id": _TEXT,
                "force": t.BOOLEAN,
                "display_name": _TEXT,
                "display_description": _TEXT,
            },
            "required": ["volume_id"],
            "additionalProperties": False,
        },
    },
    "required": ["snapshot"],
    "additionalProperties": False,
}
