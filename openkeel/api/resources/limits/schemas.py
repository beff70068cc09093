"""Query schemas of ``/limits``, each a delta of the version before it."""

from __future__ import annotations

from openkeel.api.validation import Versioned, loose_query, multi, strict_query

_PROPERTIES = {"tenant_id": multi({"type": "string"})}
index_query_v21 = loose_query(_PROPERTIES)
# 2.75: unknown query parameters are rejected.
index_query_v275 = strict_query(_PROPERTIES)

INDEX_QUERY = Versioned.of(("2.1", index_query_v21), ("2.75", index_query_v275))
