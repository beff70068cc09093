"""Bodies of the server actions whose operations need roles not built yet (resize, rebuild,
snapshot, crash dump): validated exactly as Nova does so clients get the same 400s."""

from __future__ import annotations

import copy
from typing import Any

from openkeel.api.resources.servers import schema_types as t


def _empty(key: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {key: {}},
        "required": [key],
        "additionalProperties": False,
    }


CONFIRM_RESIZE = _empty("confirmResize")
SHELVE = _empty("shelve")
SHELVE_OFFLOAD = _empty("shelveOffload")
UNSHELVE_V21 = _empty("unshelve")
UNSHELVE_V277: dict[str, Any] = {
    "type": "object",
    "properties": {
        "unshelve": {
            "type": ["object", "null"],
            "properties": {"availability_zone": t.NAME},
            "required": ["availability_zone"],  # {"unshelve": {}} is refused
            "additionalProperties": False,
        }
    },
    "required": ["unshelve"],
    "additionalProperties": False,
}
UNSHELVE_V291: dict[str, Any] = {
    "type": "object",
    "properties": {
        "unshelve": {
            "type": ["object", "null"],
            "properties": {
                "availability_zone": {"type": ["string", "null"]},
                "host": {"type": "string"},
            },
            "additionalProperties": False,
        }
    },
    "required": ["unshelve"],
    "additionalProperties": False,
}
REVERT_RESIZE = _empty("revertResize")
TRIGGER_CRASH_DUMP: dict[str, Any] = {
    "type": "object",
    "properties": {"trigger_crash_dump": {"type": "null"}},
    "required": ["trigger_crash_dump"],
    "additionalProperties": False,
}
RESIZE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "resize": {
            "type": "object",
            "properties": {"flavorRef": t.FLAVOR_REF, "OS-DCF:diskConfig": t.DISK_CONFIG},
            "required": ["flavorRef"],
            "additionalProperties": False,
        }
    },
    "required": ["resize"],
    "additionalProperties": False,
}
CREATE_IMAGE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "createImage": {
            "type": "object",
            "properties": {"name": t.NAME, "metadata": t.METADATA},
            "required": ["name"],
            "additionalProperties": False,
        }
    },
    "required": ["createImage"],
    "additionalProperties": False,
}
CREATE_BACKUP_V21: dict[str, Any] = {
    "type": "object",
    "properties": {
        "createBackup": {
            "type": "object",
            "properties": {
                "name": t.NAME,
                "backup_type": {"type": "string"},
                "rotation": t.NON_NEGATIVE_INTEGER,
                "metadata": t.METADATA,
            },
            "required": ["name", "backup_type", "rotation"],
            "additionalProperties": False,
        }
    },
    "required": ["createBackup"],
    "additionalProperties": False,
}
REBUILD_V21: dict[str, Any] = {
    "type": "object",
    "properties": {
        "rebuild": {
            "type": "object",
            "properties": {
                "name": t.NAME,
                "imageRef": t.UUID,
                "adminPass": t.ADMIN_PASSWORD,
                "metadata": t.METADATA,
                "preserve_ephemeral": t.BOOLEAN,
                "OS-DCF:diskConfig": t.DISK_CONFIG,
                "accessIPv4": t.ACCESS_IPV4,
                "accessIPv6": t.ACCESS_IPV6,
                "personality": t.PERSONALITY,
            },
            "required": ["imageRef"],
            "additionalProperties": False,
        }
    },
    "required": ["rebuild"],
    "additionalProperties": False,
}


def _derive(base: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    copied = copy.deepcopy(base)
    return copied, copied["properties"]["rebuild"]["properties"]


CREATE_BACKUP_V20 = copy.deepcopy(CREATE_BACKUP_V21)
CREATE_BACKUP_V20["properties"]["createBackup"]["properties"]["name"] = t.NAME_V20
REBUILD_V20, _p = _derive(REBUILD_V21)
_p["name"] = t.NAME_V20
REBUILD_V219, _p = _derive(REBUILD_V21)
_p["description"] = t.DESCRIPTION
REBUILD_V254, _p = _derive(REBUILD_V219)
_p["key_name"] = t.NAME_OR_NONE
REBUILD_V257, _p = _derive(REBUILD_V254)
del _p["personality"]
_p["user_data"] = {**t.USER_DATA, "type": ["string", "null"]}
REBUILD_V263, _p = _derive(REBUILD_V257)
_p["trusted_image_certificates"] = t.TRUSTED_CERTS
REBUILD_V290, _p = _derive(REBUILD_V263)
_p["hostname"] = t.HOSTNAME
REBUILD_V294, _p = _derive(REBUILD_V290)
_p["hostname"] = t.FQDN
del _p
