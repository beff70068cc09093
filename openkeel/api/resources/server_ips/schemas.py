"""Query schemas of /servers/{server_id}/ips, each a delta named after the microversion that
introduced it."""

from __future__ import annotations

from openkeel.api.validation import loose_query, strict_query

QUERY_V21 = loose_query()
# 2.102: unknown query parameters are rejected (index and show).
QUERY_V2102 = strict_query()
