"""Request schemas of the ``os-floating-ips`` proxy and the ``addFloatingIp`` /
``removeFloatingIp`` actions (Nova 34.0.0's, written out)."""

from __future__ import annotations

from typing import Any

from openkeel.api.resources.servers import schema_types as t

# No body, or a pool by name or id (null: the default pool).
CREATE: dict[str, Any] = {
    "type": ["object", "null"],
    "properties": {"pool": {"type": ["string", "null"]}},
}
# Nova's query schemas here are empty (any parameter: its 500); every parameter is ignored.
ANY_QUERY: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": True}


def _action(key: str, fields: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            key: {
                "type": "object",
                "properties": fields,
                "required": ["address"],
                "additionalProperties": False,
            }
        },
        "required": [key],
        "additionalProperties": False,
    }


ADD = _action("addFloatingIp", {"address": t.IP_ADDRESS, "fixed_address": t.IP_ADDRESS})
REMOVE = _action("removeFloatingIp", {"address": t.IP_ADDRESS})
