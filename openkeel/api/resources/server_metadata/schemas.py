"""Request body and query schemas of /servers/{server_id}/metadata, each a delta named after
the microversion that introduced it (Nova's constraints, reproduced)."""

from __future__ import annotations

from typing import Any

from openkeel.api.resources.servers.schema_types import METADATA
from openkeel.api.validation import loose_query, strict_query

# 2.1: create (merge) and update_all (replace) take {"metadata": {...}}.
CREATE_V21: dict[str, Any] = {
    "type": "object",
    "properties": {"metadata": METADATA},
    "required": ["metadata"],
    "additionalProperties": False,
}
UPDATE_ALL_V21 = CREATE_V21

# 2.1: update one key takes {"meta": {key: value}} with exactly one item.
UPDATE_V21: dict[str, Any] = {
    "type": "object",
    "properties": {"meta": {**METADATA, "minProperties": 1, "maxProperties": 1}},
    "required": ["meta"],
    "additionalProperties": False,
}

QUERY_V21 = loose_query()
# 2.102: unknown query parameters are rejected (index and show).
QUERY_V2102 = strict_query()
