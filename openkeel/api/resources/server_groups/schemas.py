"""Request body and query schemas of os-server-groups, each a delta named after the
microversion that introduced it (Nova's constraints, reproduced)."""

from __future__ import annotations

import copy
from typing import Any

from openkeel.api.validation import loose_query, multi, strict_query

_NAME = {"type": "string", "format": "name", "minLength": 1, "maxLength": 255}
_HARD = ["anti-affinity", "affinity"]
_ALL = ["anti-affinity", "affinity", "soft-anti-affinity", "soft-affinity"]


def _policies(allowed: list[str]) -> dict[str, Any]:
    # A single-item array; 2.64 replaces it by the ``policy`` string.
    return {
        "type": "array",
        "prefixItems": [{"type": "string", "enum": allowed}],
        "uniqueItems": True,
        "minItems": 1,
        "maxItems": 1,
        "additionalItems": False,
    }


def _create(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "server_group": {
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": False,
            }
        },
        "required": ["server_group"],
        "additionalProperties": False,
    }


CREATE_V21 = _create({"name": _NAME, "policies": _policies(_HARD)}, ["name", "policies"])
# 2.15: the soft policies.
CREATE_V215 = _create({"name": _NAME, "policies": _policies(_ALL)}, ["name", "policies"])
# 2.64: one ``policy`` and optional ``rules``.
_POSITIVE_INTEGER = {"type": ["integer", "string"], "pattern": "^[0-9]*$", "minimum": 1,
                     "minLength": 1}  # fmt: skip
CREATE_V264 = _create(
    {
        "name": _NAME,
        "policy": {"type": "string", "enum": _ALL},
        "rules": {
            "type": "object",
            "properties": {"max_server_per_host": _POSITIVE_INTEGER},
            "additionalProperties": False,
        },
    },
    ["name", "policy"],
)

_NON_NEGATIVE_INTEGER = {"type": ["integer", "string"], "pattern": "^[0-9]*$", "minimum": 0,
                         "minLength": 1}  # fmt: skip
INDEX_QUERY_V21 = loose_query(
    {
        "all_projects": multi({"type": "string"}),
        "limit": multi(_NON_NEGATIVE_INTEGER),
        "offset": multi(_NON_NEGATIVE_INTEGER),
    }
)
# 2.75: unknown query parameters are rejected.
INDEX_QUERY_V275 = strict_query(copy.deepcopy(INDEX_QUERY_V21["properties"]))

SHOW_QUERY_V21 = loose_query()
# 2.102: unknown query parameters are rejected.
SHOW_QUERY_V2102 = strict_query()
