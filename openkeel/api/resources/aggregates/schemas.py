"""Request body and query schemas of os-aggregates, each a delta named after the
microversion that introduced it (Nova's constraints, reproduced)."""

from __future__ import annotations

import copy
from typing import Any

from openkeel.api.validation import loose_query, strict_query

_NAME = {"type": "string", "format": "name", "minLength": 1, "maxLength": 255}
_NAME_V20 = {**_NAME, "format": "name_with_leading_trailing_spaces"}
_AZ = {"oneOf": [{"type": "string", "format": "az_name", "minLength": 1, "maxLength": 255},
                 {"type": "null"}]}  # fmt: skip
_AZ_V20 = {"oneOf": [{"type": "string", "format": "az_name_with_leading_trailing_spaces",
                      "minLength": 1, "maxLength": 255}, {"type": "null"}]}  # fmt: skip
_FQDN = {"type": "string", "pattern": "^[a-zA-Z0-9-._]*$", "minLength": 1, "maxLength": 255}
_META_KEY = "^[a-zA-Z0-9-_:. ]{1,255}$"


def _wrap(key: str, inner: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {key: inner},
        "required": [key],
        "additionalProperties": False,
    }


def _aggregate(
    properties: dict[str, Any], required: list[str] | None = None, **after: Any
) -> dict[str, Any]:
    # Keyword order decides which error is reported first: keep Nova's order
    # (properties, required, additionalProperties, then anyOf).
    body: dict[str, Any] = {"type": "object", "properties": properties}
    if required is not None:
        body["required"] = required
    body["additionalProperties"] = False
    return _wrap("aggregate", {**body, **after})


CREATE_V20 = _aggregate({"name": _NAME_V20, "availability_zone": _AZ_V20}, required=["name"])
CREATE_V21 = _aggregate({"name": _NAME, "availability_zone": _AZ}, required=["name"])

_EITHER: list[Any] = [{"required": ["name"]}, {"required": ["availability_zone"]}]
UPDATE_V20 = _aggregate({"name": _NAME_V20, "availability_zone": _AZ_V20}, anyOf=_EITHER)
# Nova's update schema keeps the lenient name format from 2.1 on as well.
UPDATE_V21 = _aggregate({"name": _NAME_V20, "availability_zone": _AZ}, anyOf=_EITHER)


def _host_action(key: str) -> dict[str, Any]:
    return _wrap(
        key,
        {
            "type": "object",
            "properties": {"host": _FQDN},
            "required": ["host"],
            "additionalProperties": False,
        },
    )


ADD_HOST = _host_action("add_host")
REMOVE_HOST = _host_action("remove_host")

SET_METADATA = _wrap(
    "set_metadata",
    {
        "type": "object",
        "properties": {
            "metadata": {
                "type": "object",
                "patternProperties": {
                    _META_KEY: {"type": ["string", "null"], "maxLength": 255},
                },
                "additionalProperties": False,
            }
        },
        "required": ["metadata"],
        "additionalProperties": False,
    },
)

# 2.81: ask the aggregate's hosts to pre-cache images.
IMAGES_V281 = {
    "type": "object",
    "properties": {
        "cache": {
            "type": ["array"],
            "minItems": 1,
            "items": {
                "type": "object",
                "properties": {"id": {"type": "string", "format": "uuid"}},
                "additionalProperties": False,
                "required": ["id"],
            },
        }
    },
    "required": ["cache"],
    "additionalProperties": False,
}

QUERY_V21 = loose_query()
# 2.102: unknown query parameters are rejected.
QUERY_V2102 = strict_query(copy.deepcopy(QUERY_V21["properties"]))
