"""Request body and query schemas of /servers/{server_id}/tags (2.26+), each a delta named
after the microversion that introduced it (Nova's constraints, reproduced)."""

from __future__ import annotations

from typing import Any

from openkeel.api.usecases.server_tags import MAX_TAG_COUNT, TAG_SCHEMA
from openkeel.api.validation import loose_query

# 2.26: replace all tags with {"tags": [...]} (at most 50).
UPDATE_ALL_V226: dict[str, Any] = {
    "title": "Server tags",
    "type": "object",
    "properties": {"tags": {"type": "array", "items": TAG_SCHEMA, "maxItems": MAX_TAG_COUNT}},
    "required": ["tags"],
    "additionalProperties": False,
}
# 2.26: adding one tag takes no body.
UPDATE_V226: dict[str, Any] = {"title": "Server tag", "type": "null"}

# Nova never made these strict (its 2.102 tags query schemas are not wired to the routes).
QUERY_V226 = loose_query()
