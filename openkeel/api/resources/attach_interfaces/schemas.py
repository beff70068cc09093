"""Request schemas of ``/servers/{server_id}/os-interface`` (Nova 34.0.0's, written out)."""

from __future__ import annotations

import copy
from typing import Any

from openkeel.api.resources.servers import schema_types as t

_ATTACHMENT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "net_id": t.UUID,
        "port_id": t.UUID,
        "fixed_ips": {
            "type": "array",
            "minItems": 1,
            "maxItems": 1,
            "items": {
                "type": "object",
                "properties": {"ip_address": t.IP_ADDRESS},
                "required": ["ip_address"],
                "additionalProperties": False,
            },
        },
    },
    "additionalProperties": False,
}
# No body at all is an attach on whatever network the project has (Nova's ``if body:``).
CREATE_V21: dict[str, Any] = {
    "type": ["object", "null"],
    "properties": {"interfaceAttachment": _ATTACHMENT},
    "additionalProperties": False,
}
CREATE_V249 = copy.deepcopy(CREATE_V21)
CREATE_V249["properties"]["interfaceAttachment"]["properties"]["tag"] = t.TAG
QUERY_V21: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": True}
QUERY_V2102: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}
