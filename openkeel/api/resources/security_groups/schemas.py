"""Request schemas of a server's security groups (Nova 34.0.0's, written out)."""

from __future__ import annotations

from typing import Any

from openkeel.api.validation import loose_query, multi


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

# --- the os-security-groups / os-security-group-rules proxies (2.1-2.35) --------------------
_TEXT_255: dict[str, Any] = {"type": "string", "minLength": 0, "maxLength": 255}
# Nova keeps both bodies open to unknown keys (what it never checked it does not start to).
GROUP: dict[str, Any] = {
    "type": "object",
    "properties": {
        "security_group": {
            "type": "object",
            "properties": {"name": _TEXT_255, "description": _TEXT_255},
            "required": ["name", "description"],
            "additionalProperties": True,
        }
    },
    "required": ["security_group"],
    "additionalProperties": True,
}
RULE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "security_group_rule": {
            "type": "object",
            "properties": {
                "group_id": {"type": ["string", "null"], "format": "uuid"},
                "parent_group_id": {"type": "string", "format": "uuid"},
                # Never checked by Nova's schema: its rule builder checks them.
                "to_port": {},
                "from_port": {},
                "ip_protocol": {},
                "cidr": {},
            },
            "required": ["parent_group_id"],
            "additionalProperties": True,
        }
    },
    "required": ["security_group_rule"],
    "additionalProperties": True,
}
_NON_NEGATIVE = {"type": ["integer", "string"], "pattern": "^[0-9]*$", "minimum": 0, "minLength": 1}
PROXY_INDEX_QUERY = loose_query(
    {"limit": multi(_NON_NEGATIVE), "offset": multi(_NON_NEGATIVE),
     "all_tenants": multi({"type": "string"})}
)  # fmt: skip
PROXY_SHOW_QUERY = loose_query()
