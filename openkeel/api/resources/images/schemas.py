"""Query schemas of the /images proxy (Nova's: filters unvalidated, paging integers)."""

from __future__ import annotations

from openkeel.api.validation import loose_query, multi

_POSITIVE_INTEGER = {
    "type": ["integer", "string"],
    "pattern": "^[0-9]*$",
    "minimum": 1,
    "minLength": 1,
}

# 2.1: filters are passed through as given; limit, page_size and offset must be positive.
INDEX_QUERY_V21 = loose_query(
    {
        "name": {},
        "status": {},
        "changes-since": {},
        "server": {},
        "type": {},
        "minRam": {},
        "minDisk": {},
        "limit": multi(_POSITIVE_INTEGER),
        "page_size": multi(_POSITIVE_INTEGER),
        "marker": {},
        "offset": multi(_POSITIVE_INTEGER),
    },
    patternProperties={"^property-.*$": {}},
)
SHOW_QUERY_V21 = loose_query()
