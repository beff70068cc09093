"""Request and query schemas of ``/os-quota-class-sets``, each a delta of the version before."""

from __future__ import annotations

from typing import Any

from openkeel.api.resources.quota_sets.schemas import QUOTA_PROPERTIES, without
from openkeel.api.validation import Versioned, loose_query, strict_query
from openkeel.domain.quotas import NETWORK_RESOURCES, PERSONALITY_RESOURCES


def _update_body(properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "quota_class_set": {
                "type": "object",
                "properties": properties,
                "additionalProperties": False,
            },
        },
        "required": ["quota_class_set"],
        "additionalProperties": False,
    }


update_v21 = _update_body(dict(QUOTA_PROPERTIES))
# 2.50: the nova-network proxy quotas are gone.
update_v250 = _update_body(without(QUOTA_PROPERTIES, NETWORK_RESOURCES))
# 2.57: personality (injected files) quotas are gone.
update_v257 = _update_body(without(QUOTA_PROPERTIES, NETWORK_RESOURCES + PERSONALITY_RESOURCES))

show_query_v21 = loose_query()
# 2.102: unknown query parameters are rejected.
show_query_v2102 = strict_query()

UPDATE = Versioned.of(("2.1", update_v21), ("2.50", update_v250), ("2.57", update_v257))
SHOW_QUERY = Versioned.of(("2.1", show_query_v21), ("2.102", show_query_v2102))
