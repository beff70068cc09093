"""Query schemas of ``/os-availability-zone``, each a delta of the version before it."""

from __future__ import annotations

from openkeel.api.validation import Versioned, loose_query, strict_query

index_query_v21 = loose_query()
# 2.102: unknown query parameters are rejected.
index_query_v2102 = strict_query()

QUERY = Versioned.of(("2.1", index_query_v21), ("2.102", index_query_v2102))
