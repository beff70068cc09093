"""Request schemas of the ``os-volumes`` proxy (Nova 34.0.0's, written out)."""

from __future__ import annotations

from typing import Any

from openkeel.api.validation import loose_query, multi

_TEXT: dict[str, Any] = {"type": "string"}
CREATE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "volume": {
            "type": "object",
            "properties": {
                "volume_type": _TEXT,
                "metadata": {"type": "object", "properties": {}, "additionalProperties": True},
                "snapshot_id": _TEXT,
                "size": {"type": ["integer", "string"], "pattern": "^[0-9]+$", "minimum": 1},
                "availability_zone": _TEXT,
                "display_name": _TEXT,
                "display_description": _TEXT,
            },
            "required": ["size"],
            "additionalProperties": False,
        },
    },
    "required": ["volume"],
    "additionalProperties": False,
}
_NON_NEGATIVE_INTEGER = {"type": ["integer", "string"], "pattern": "^[0-9]*$", "minimum": 0,
                         "minLength": 1}  # fmt: skip
# Nova applies the loose schemas at every version the proxies serve.
LIST_QUERY = loose_query(
    {"limit": multi(_NON_NEGATIVE_INTEGER), "offset": multi(_NON_NEGATIVE_INTEGER)}
)
SHOW_QUERY = loose_query()
