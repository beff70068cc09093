"""Request schemas of a server's security groups (Nova 34.0.0's, written out)."""

from __future__ import annotations

from typing import Any


def _action(key: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            key: {
                "type": "object",
                "properties": {"name": {"type": "string", "minLength": 1}},
                "required": ["name"],
                "additionalProperties": False,
            }
        },
        "required": [key],
        "additionalProperties": True,
    }


ADD = _action("addSecurityGroup")
REMOVE = _action("removeSecurityGroup")
# GET /servers/{id}/os-security-groups: anything before 2.102, nothing from it.
INDEX_QUERY_V21: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": True}
INDEX_QUERY_V2102: dict[str, Any] = {
    "type": "object",
    "properties": {},
    "additionalProperties": False,
}
