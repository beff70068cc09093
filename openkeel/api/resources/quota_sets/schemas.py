"""Request and query schemas of ``/os-quota-sets``, each a delta of the version before it."""

from __future__ import annotations

import copy
from typing import Any

from openkeel.api.validation import Versioned, loose_query, multi, strict_query
from openkeel.domain.quotas import NETWORK_RESOURCES, PERSONALITY_RESOURCES, RESOURCES

QUOTA_VALUE: dict[str, Any] = {
    "type": ["integer", "string"],
    "pattern": "^-?[0-9]+$",
    "minimum": -1,
    "maximum": 0x7FFFFFFF,
}
BOOLEAN: dict[str, Any] = {
    "type": ["boolean", "string"],
    "enum": [
        True, "True", "TRUE", "true", "1", "ON", "On", "on", "YES", "Yes", "yes",
        False, "False", "FALSE", "false", "0", "OFF", "Off", "off", "NO", "No", "no",
    ],
}  # fmt: skip

QUOTA_PROPERTIES: dict[str, Any] = {name: QUOTA_VALUE for name in RESOURCES}


def without(properties: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    """A copy of ``properties`` minus ``names``."""
    return {k: v for k, v in properties.items() if k not in names}


def _update_body(properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "quota_set": {
                "type": "object",
                "properties": properties,
                "additionalProperties": False,
            },
        },
        "required": ["quota_set"],
        "additionalProperties": False,
    }


update_v21 = _update_body({**QUOTA_PROPERTIES, "force": BOOLEAN})
# 2.36: the nova-network proxy quotas are gone.
update_v236 = _update_body(
    without(copy.deepcopy(update_v21)["properties"]["quota_set"]["properties"], NETWORK_RESOURCES)
)
# 2.57: personality (injected files) quotas are gone.
update_v257 = _update_body(
    without(update_v236["properties"]["quota_set"]["properties"], PERSONALITY_RESOURCES)
)

_USER_QUERY = {"user_id": multi({"type": "string"})}
user_query_v21 = loose_query(_USER_QUERY)
# 2.75: unknown query parameters are rejected.
user_query_v275 = strict_query(_USER_QUERY)

UPDATE = Versioned.of(("2.1", update_v21), ("2.36", update_v236), ("2.57", update_v257))
USER_QUERY = Versioned.of(("2.1", user_query_v21), ("2.75", user_query_v275))
DEFAULTS_QUERY = Versioned.of(("2.1", loose_query()))
