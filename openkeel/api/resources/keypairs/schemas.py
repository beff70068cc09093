"""Request body and query schemas of os-keypairs, each a delta named after the
microversion that introduced it (Nova's constraints, reproduced)."""

from __future__ import annotations

import copy
from typing import Any

from openkeel.api.validation import loose_query, multi, strict_query

_NAME_FORMAT = {"type": "string", "format": "name", "minLength": 1, "maxLength": 255}


def _keypair_name(pattern: str) -> dict[str, Any]:
    return {
        "allOf": [
            _NAME_FORMAT,
            {"type": "string", "pattern": pattern, "minLength": 1, "maxLength": 255},
        ]
    }


def _create_body(keypair_properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "keypair": {
                "type": "object",
                "properties": keypair_properties,
                "required": required,
                "additionalProperties": False,
            }
        },
        "required": ["keypair"],
        "additionalProperties": False,
    }


NAME_V21 = _keypair_name(r"^[_\- a-zA-Z0-9]+$")
# 2.92 also allows '@' and '.' (e.g. e-mail addresses as key names).
NAME_V292 = _keypair_name(r"^[_\-\@\. a-zA-Z0-9]+$")

_V21_PROPERTIES: dict[str, Any] = {"name": NAME_V21, "public_key": {"type": "string"}}
CREATE_V21 = _create_body(_V21_PROPERTIES, ["name"])

# 2.2: the key type.
_V22_PROPERTIES = {**_V21_PROPERTIES, "type": {"type": "string", "enum": ["ssh", "x509"]}}
CREATE_V22 = _create_body(_V22_PROPERTIES, ["name"])

# 2.10: admins may create a key pair for another user.
_V210_PROPERTIES = {**_V22_PROPERTIES, "user_id": {"type": "string"}}
CREATE_V210 = _create_body(_V210_PROPERTIES, ["name"])

# 2.92: import only (public_key required), wider name pattern.
CREATE_V292 = _create_body({**_V210_PROPERTIES, "name": NAME_V292}, ["name", "public_key"])

_NON_NEGATIVE_INTEGER = {
    "type": ["integer", "string"],
    "pattern": "^[0-9]*$",
    "minimum": 0,
    "minLength": 1,
}

QUERY_V21 = loose_query()
# 2.10: ``user_id`` (admins) for index, show and delete.
QUERY_V210 = loose_query({"user_id": multi({"type": "string"})})
# 2.35: paging of the index.
INDEX_QUERY_V235 = loose_query(
    {
        **QUERY_V210["properties"],
        "limit": multi(_NON_NEGATIVE_INTEGER),
        "marker": multi({"type": "string"}),
    }
)
# 2.75: unknown query parameters are rejected.
QUERY_V275 = strict_query(copy.deepcopy(QUERY_V210["properties"]))
INDEX_QUERY_V275 = strict_query(copy.deepcopy(INDEX_QUERY_V235["properties"]))
