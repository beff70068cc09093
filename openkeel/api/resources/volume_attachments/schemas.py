"""Request schemas of ``/servers/{server_id}/os-volume_attachments`` (Nova 34.0.0's, written
out): 2.49 tag, 2.79 delete_on_termination; the index query strict from 2.75."""

from __future__ import annotations

import copy
from typing import Any

from openkeel.api.resources.servers import schema_types as t
from openkeel.api.validation import loose_query, multi, strict_query

# Nova's block_device.match_device pattern.
DEVICE: dict[str, Any] = {
    "type": ["string", "null"],
    "pattern": "(^/dev/x{0,1}[a-z]{0,1}d{0,1})([a-z]+)[0-9]*$",
}
CREATE_V21: dict[str, Any] = {
    "type": "object",
    "properties": {
        "volumeAttachment": {
            "type": "object",
            "properties": {"volumeId": t.UUID, "device": DEVICE},
            "required": ["volumeId"],
            "additionalProperties": False,
        },
    },
    "required": ["volumeAttachment"],
    "additionalProperties": False,
}
CREATE_V249 = copy.deepcopy(CREATE_V21)
CREATE_V249["properties"]["volumeAttachment"]["properties"]["tag"] = t.TAG
CREATE_V279 = copy.deepcopy(CREATE_V249)
CREATE_V279["properties"]["volumeAttachment"]["properties"]["delete_on_termination"] = t.BOOLEAN

# The PUT: below 2.85 the volume to swap to alone; from 2.85 the attachment as GET shows it
# (only delete_on_termination may differ, unless swapping).
UPDATE_V21 = copy.deepcopy(CREATE_V21)
del UPDATE_V21["properties"]["volumeAttachment"]["properties"]["device"]
UPDATE_V285 = copy.deepcopy(CREATE_V279)
UPDATE_V285["properties"]["volumeAttachment"]["properties"].update(
    {"serverId": t.UUID, "id": t.UUID}
)

_NON_NEGATIVE_INTEGER = {"type": ["integer", "string"], "pattern": "^[0-9]*$", "minimum": 0,
                         "minLength": 1}  # fmt: skip
INDEX_QUERY_V21 = loose_query(
    {"limit": multi(_NON_NEGATIVE_INTEGER), "offset": multi(_NON_NEGATIVE_INTEGER)}
)
INDEX_QUERY_V275 = strict_query(copy.deepcopy(INDEX_QUERY_V21["properties"]))
SHOW_QUERY_V21 = loose_query()
