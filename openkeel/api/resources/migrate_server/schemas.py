"""Body of the ``migrate`` action: any body before 2.56 (Nova validates none), then
``{"migrate": null | {"host": fqdn | null}}``."""

from __future__ import annotations

from typing import Any

from openkeel.api.resources.servers import schema_types as t

MIGRATE_V21: dict[str, Any] = {"type": "object", "required": ["migrate"]}
MIGRATE_V256: dict[str, Any] = {
    "type": "object",
    "properties": {
        "migrate": {
            "type": ["object", "null"],
            "properties": {"host": {**t.FQDN, "type": ["string", "null"]}},
            "additionalProperties": False,
        }
    },
    "required": ["migrate"],
    "additionalProperties": False,
}
