"""Request body of POST /os-server-external-events: a delta per microversion adding the event
names it introduced (2.51 volume-extended, 2.76 power-update, 2.82 accelerator-request-bound,
2.93 volume-reimaged)."""

from __future__ import annotations

import copy
from typing import Any

STATUSES = ["failed", "completed", "in-progress"]


def _with_name(schema: dict[str, Any], name: str) -> dict[str, Any]:
    extended = copy.deepcopy(schema)
    extended["properties"]["events"]["items"]["properties"]["name"]["enum"].append(name)
    return extended


CREATE_V21: dict[str, Any] = {
    "type": "object",
    "properties": {
        "events": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "properties": {
                    "name": {
                        "type": "string",
                        "enum": [
                            "network-changed",
                            "network-vif-plugged",
                            "network-vif-unplugged",
                            "network-vif-deleted",
                        ],
                    },
                    "server_uuid": {"type": "string", "format": "uuid"},
                    "status": {"type": "string", "enum": STATUSES},
                    "tag": {"type": "string", "maxLength": 255},
                },
                "required": ["name", "server_uuid"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["events"],
    "additionalProperties": False,
}
CREATE_V251 = _with_name(CREATE_V21, "volume-extended")
CREATE_V276 = _with_name(CREATE_V251, "power-update")
CREATE_V282 = _with_name(CREATE_V276, "accelerator-request-bound")
CREATE_V293 = _with_name(CREATE_V282, "volume-reimaged")
