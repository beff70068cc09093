"""Request schemas of ``/os-assisted-volume-snapshots`` (Nova 34.0.0's, written out): the
create body; the delete query (``delete_info``, a JSON document), strict from 2.75."""

from __future__ import annotations

import copy
from typing import Any

from openkeel.api.validation import loose_query, multi, strict_query

_TEXT: dict[str, Any] = {"type": "string", "minLength": 1}
_CREATE_INFO: dict[str, Any] = {
    "type": "object",
    "properties": {"snapshot_id": _TEXT, "type": {"type": "string", "enum": ["qcow2"]},
                   "new_file": _TEXT, "id": _TEXT},
    "required": ["snapshot_id", "type", "new_file"],
    "additionalProperties": False,
}  # fmt: skip
_SNAPSHOT: dict[str, Any] = {
    "type": "object",
    "properties": {"volume_id": _TEXT, "create_info": _CREATE_INFO},
    "required": ["volume_id", "create_info"],
    "additionalProperties": False,
}
CREATE_V21: dict[str, Any] = {
    "type": "object",
    "properties": {"snapshot": _SNAPSHOT},
    "required": ["snapshot"],
    "additionalProperties": False,
}
DELETE_QUERY_V21 = loose_query({"delete_info": multi({"type": "string"})})
DELETE_QUERY_V275 = strict_query(copy.deepcopy(DELETE_QUERY_V21["properties"]))
