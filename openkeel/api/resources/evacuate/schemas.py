"""Body of ``evacuate``: 2.1 ``host``, ``onSharedStorage`` (required), ``adminPass``; 2.14 drops
``onSharedStorage``; 2.29 adds ``force``; 2.68 removes it."""

from __future__ import annotations

from typing import Any

from openkeel.api.resources.servers import schema_types as t


def _evacuate(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "evacuate": {
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": False,
            }
        },
        "required": ["evacuate"],
        "additionalProperties": False,
    }


_HOST: dict[str, Any] = t.FQDN
EVACUATE_V21 = _evacuate(
    {"host": _HOST, "onSharedStorage": t.BOOLEAN, "adminPass": t.ADMIN_PASSWORD},
    ["onSharedStorage"],
)
EVACUATE_V214 = _evacuate({"host": _HOST, "adminPass": t.ADMIN_PASSWORD}, [])
EVACUATE_V229 = _evacuate({"host": _HOST, "adminPass": t.ADMIN_PASSWORD, "force": t.BOOLEAN}, [])
EVACUATE_V268 = EVACUATE_V214
