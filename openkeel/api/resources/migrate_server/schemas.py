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

_HOST: dict[str, Any] = {**t.FQDN, "type": ["string", "null"]}
_BLOCK_AUTO: dict[str, Any] = {**t.BOOLEAN, "enum": [*t.BOOLEAN["enum"], "auto"]}


def _live(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "os-migrateLive": {
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": False,
            }
        },
        "required": ["os-migrateLive"],
        "additionalProperties": False,
    }


# ``os-migrateLive``: 2.0 block_migration + disk_over_commit + host; 2.25 drops
# disk_over_commit and allows block_migration "auto"; 2.30 adds force; 2.68 removes it.
MIGRATE_LIVE_V21 = _live(
    {"block_migration": t.BOOLEAN, "disk_over_commit": t.BOOLEAN, "host": _HOST},
    ["block_migration", "disk_over_commit", "host"],
)
MIGRATE_LIVE_V225 = _live(
    {"block_migration": _BLOCK_AUTO, "host": _HOST}, ["block_migration", "host"]
)
MIGRATE_LIVE_V230 = _live(
    {"block_migration": _BLOCK_AUTO, "host": _HOST, "force": t.BOOLEAN},
    ["block_migration", "host"],
)
MIGRATE_LIVE_V268 = MIGRATE_LIVE_V225
