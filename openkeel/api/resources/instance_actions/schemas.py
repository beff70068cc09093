"""Query schemas of os-instance-actions, each a delta named after the microversion that
introduced it (Nova's constraints, reproduced)."""

from __future__ import annotations

import copy
from typing import Any

from openkeel.api.validation import loose_query, single, strict_query

_NON_NEGATIVE_INTEGER = {"type": ["integer", "string"], "pattern": "^[0-9]*$", "minimum": 0,
                         "minLength": 1}  # fmt: skip
_DATE_TIME = {"type": "string", "format": "date-time"}

INDEX_QUERY_V21 = loose_query()
# 2.58: paging by limit/marker and the changes-since filter; unknown parameters are rejected.
INDEX_QUERY_V258 = strict_query(
    {
        "limit": single(_NON_NEGATIVE_INTEGER),
        "marker": single({"type": "string"}),
        "changes-since": single(_DATE_TIME),
    }
)
# 2.66: the changes-before filter.
_V266: dict[str, Any] = copy.deepcopy(INDEX_QUERY_V258["properties"])
_V266["changes-before"] = single(_DATE_TIME)
INDEX_QUERY_V266 = strict_query(_V266)

SHOW_QUERY_V21 = loose_query()
# 2.102: unknown query parameters are rejected.
SHOW_QUERY_V2102 = strict_query()
