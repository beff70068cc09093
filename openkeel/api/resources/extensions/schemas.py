"""Query schemas of the extensions resource (no parameters; strict from 2.102).

Read by the extensions routes; unknown parameters are ignored before 2.102, rejected after.
"""

from __future__ import annotations

from openkeel.api.validation import Versioned, loose_query, strict_query

INDEX_QUERY_V21 = loose_query()
INDEX_QUERY_V2102 = strict_query()

SHOW_QUERY_V21 = loose_query()
SHOW_QUERY_V2102 = strict_query()

INDEX_QUERY = Versioned.of(("2.1", INDEX_QUERY_V21), ("2.102", INDEX_QUERY_V2102))
SHOW_QUERY = Versioned.of(("2.1", SHOW_QUERY_V21), ("2.102", SHOW_QUERY_V2102))
