"""Request and query schemas of ``/os-services``, each a delta of the version before it."""

from __future__ import annotations

import copy
from typing import Any

from openkeel.api.validation import Versioned, loose_query, multi, strict_query

_BOOLEAN = {
    "type": ["boolean", "string"],
    "enum": [
        *(True, "True", "TRUE", "true", "1", "ON", "On", "on", "YES", "Yes", "yes"),
        *(False, "False", "FALSE", "false", "0", "OFF", "Off", "off", "NO", "No", "no"),
    ],
}
_FQDN = {"type": "string", "pattern": "^[a-zA-Z0-9-._]*$", "minLength": 1, "maxLength": 255}
_TEXT = {"type": "string", "minLength": 1, "maxLength": 255}

update: dict[str, Any] = {
    "type": "object",
    "properties": {"host": _FQDN, "binary": _TEXT, "disabled_reason": _TEXT},
    "required": ["host", "binary"],
    "additionalProperties": False,
}
# 2.11: the force-down action takes ``forced_down``.
update_v211 = copy.deepcopy(update)
update_v211["properties"]["forced_down"] = _BOOLEAN
# 2.53: the service is named by uuid in the path; the body says what changes.
update_v253 = {
    "type": "object",
    "properties": {
        "status": {"type": "string", "enum": ["enabled", "disabled"]},
        "disabled_reason": _TEXT,
        "forced_down": _BOOLEAN,
    },
    "additionalProperties": False,
}

_FILTERS = {"host": multi({"type": "string"}), "binary": multi({"type": "string"})}
index_query = loose_query(_FILTERS)
# 2.75: unknown query parameters are rejected.
index_query_v275 = strict_query(_FILTERS)

UPDATE = Versioned.of(("2.1", update), ("2.11", update_v211), ("2.53", update_v253))
INDEX_QUERY = Versioned.of(("2.1", index_query), ("2.75", index_query_v275))
