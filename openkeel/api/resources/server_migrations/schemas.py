"""Query schemas of GET /servers/{server_id}/migrations[/{id}] (loose, strict from 2.102) and
the body of the ``force_complete`` action."""

from __future__ import annotations

from typing import Any

from openkeel.api.validation import loose_query, strict_query

QUERY_V223 = loose_query()
QUERY_V2102 = strict_query()

FORCE_COMPLETE_V222: dict[str, Any] = {
    "type": "object",
    "properties": {"force_complete": {"type": "null"}},
    "required": ["force_complete"],
    "additionalProperties": False,
}
