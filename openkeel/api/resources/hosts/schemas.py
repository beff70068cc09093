"""Request schemas of os-hosts: the update body and the (loose) queries."""

from __future__ import annotations

from typing import Any

from openkeel.api.validation import loose_query, multi

_SWITCH: dict[str, Any] = {
    "type": "string",
    "enum": ["enable", "disable", "Enable", "Disable", "ENABLE", "DISABLE"],
}

UPDATE_V21: dict[str, Any] = {
    "type": "object",
    "properties": {"status": _SWITCH, "maintenance_mode": _SWITCH},
    "anyOf": [{"required": ["status"]}, {"required": ["maintenance_mode"]}],
    "additionalProperties": False,
}
INDEX_QUERY_V21 = loose_query({"zone": multi({"type": "string"})})
# show, reboot, shutdown and startup accept any query (deprecated proxy APIs).
ANY_QUERY_V21 = loose_query()
