"""Query schemas: ``start``, ``end``, ``detailed``; 2.40 ``limit``, ``marker``; 2.75 strict."""

from __future__ import annotations

import copy
from typing import Any

from openkeel.api.validation import loose_query, multi, strict_query

_STRING: dict[str, Any] = {"type": "string"}
_NON_NEGATIVE_INTEGER: dict[str, Any] = {"type": ["integer", "string"], "pattern": "^[0-9]*$", "minimum": 0, "minLength": 1}  # fmt: skip

INDEX_V21 = loose_query({"start": multi(_STRING), "end": multi(_STRING), "detailed": multi(_STRING)})  # fmt: skip
INDEX_V240 = loose_query(
    {**INDEX_V21["properties"], "limit": multi(_NON_NEGATIVE_INTEGER), "marker": multi(_STRING)}
)
INDEX_V275 = strict_query(copy.deepcopy(INDEX_V240["properties"]))
SHOW_V21 = loose_query({"start": multi(_STRING), "end": multi(_STRING)})
SHOW_V240 = loose_query(
    {**SHOW_V21["properties"], "limit": multi(_NON_NEGATIVE_INTEGER), "marker": multi(_STRING)}
)
SHOW_V275 = strict_query(copy.deepcopy(SHOW_V240["properties"]))
