"""``POST /servers`` body schemas, one per microversion that changed it (each a delta).

Bound to the create endpoint by ``routes.py``. Constraints are Nova's so 400 messages match.
"""

from __future__ import annotations

import copy
from typing import Any

from openkeel.api.resources.servers import schema_types as t

LEGACY_BDM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "virtual_name": {"type": "string", "maxLength": 255},
        "volume_id": t.UUID,
        "snapshot_id": t.UUID,
        "volume_size": t.VOLUME_SIZE,
        "device_name": {
            "type": "string",
            "minLength": 1,
            "maxLength": 255,
            "pattern": "^[a-zA-Z0-9._/-]*$",
        },
        "delete_on_termination": t.BOOLEAN,
        "no_device": {},
        "connection_info": {"type": "string", "maxLength": 16777215},
    },
    "additionalProperties": False,
}

BDM_V2: dict[str, Any] = copy.deepcopy(LEGACY_BDM)
BDM_V2["properties"].update(
    {
        "source_type": {"type": "string", "enum": ["volume", "image", "snapshot", "blank"]},
        "uuid": {
            "type": "string",
            "minLength": 1,
            "maxLength": 255,
            "pattern": "^[a-zA-Z0-9._-]*$",
        },
        "image_id": t.UUID,
        "destination_type": {"type": "string", "enum": ["local", "volume"]},
        "guest_format": {"type": "string", "maxLength": 255},
        "device_type": {"type": "string", "maxLength": 255},
        "disk_bus": {"type": "string", "maxLength": 255},
        "boot_index": {"type": ["integer", "string", "null"], "pattern": "^-?[0-9]+$"},
    }
)

_UUID_OR_LIST = {"type": ["string", "array"], "items": t.UUID}
HINTS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "group": {"oneOf": [{"type": "array", "items": t.UUID}, t.UUID]},
        "different_host": {"oneOf": [t.UUID, {"type": "array", "items": t.UUID}]},
        "same_host": _UUID_OR_LIST,
        "query": {"type": ["string", "object"]},
        "target_cell": t.NAME,
        "different_cell": {"type": ["string", "array"], "items": {"type": "string"}},
        "build_near_host_ip": t.IP_ADDRESS,
        "cidr": {"type": "string", "pattern": "^/[0-9a-f.:]+$"},
    },
    "additionalProperties": True,
}

_NETWORK_V21: dict[str, Any] = {
    "type": "object",
    "properties": {
        "fixed_ip": t.IP_ADDRESS,
        "port": {"type": ["string", "null"], "format": "uuid"},
        "uuid": {"type": "string"},
    },
    "additionalProperties": False,
}

CREATE_V21: dict[str, Any] = {
    "type": "object",
    "properties": {
        "server": {
            "type": "object",
            "properties": {
                "name": t.NAME,
                "imageRef": t.IMAGE_ID_OR_EMPTY,
                "flavorRef": t.FLAVOR_REF,
                "adminPass": t.ADMIN_PASSWORD,
                "metadata": t.METADATA,
                "networks": {"type": "array", "items": _NETWORK_V21},
                "OS-DCF:diskConfig": t.DISK_CONFIG,
                "accessIPv4": t.ACCESS_IPV4,
                "accessIPv6": t.ACCESS_IPV6,
                "personality": t.PERSONALITY,
                "availability_zone": t.NAME,
                "block_device_mapping": {"type": "array", "items": LEGACY_BDM},
                "block_device_mapping_v2": {"type": "array", "items": BDM_V2},
                "config_drive": t.BOOLEAN,
                "key_name": t.NAME,
                "min_count": t.POSITIVE_INTEGER,
                "max_count": t.POSITIVE_INTEGER,
                "return_reservation_id": t.BOOLEAN,
                "security_groups": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"name": t.NAME},
                        "additionalProperties": False,
                    },
                },
                "user_data": t.USER_DATA,
            },
            "required": ["name", "flavorRef"],
            "additionalProperties": False,
        },
        "os:scheduler_hints": HINTS,
        "OS-SCH-HNT:scheduler_hints": HINTS,
    },
    "required": ["server"],
    "additionalProperties": False,
}


def _derive(base: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A deep copy of ``base`` and its ``server`` properties (to edit in place)."""
    copied = copy.deepcopy(base)
    return copied, copied["properties"]["server"]["properties"]


CREATE_V20, _p = _derive(CREATE_V21)
_p["name"] = t.NAME_V20
_p["availability_zone"] = t.NAME_V20
_p["key_name"] = t.NAME_V20
_p["security_groups"]["items"]["properties"]["name"] = t.NAME_V20
_p["user_data"] = {**t.USER_DATA, "type": ["string", "null"]}

CREATE_V219, _p = _derive(CREATE_V21)
_p["description"] = t.DESCRIPTION

# 2.32 only: tags on networks and BDMs (Nova lost them again in 2.33 and restored them in 2.42).
CREATE_V232, _p = _derive(CREATE_V219)
_p["networks"]["items"]["properties"]["tag"] = t.TAG
_p["block_device_mapping_v2"]["items"]["properties"]["tag"] = t.TAG

CREATE_V233, _p = _derive(CREATE_V219)
_p["networks"]["items"]["properties"]["tag"] = t.TAG


def _networks_v237(with_tag: bool) -> dict[str, Any]:
    item: dict[str, Any] = {
        "type": "object",
        "properties": {
            "fixed_ip": t.IP_ADDRESS,
            "port": {"type": ["string", "null"], "format": "uuid"},
            "uuid": {"type": "string", "format": "uuid"},
        },
        "additionalProperties": False,
    }
    if with_tag:
        item["properties"]["tag"] = t.TAG
    return {
        "oneOf": [{"type": "array", "items": item}, {"type": "string", "enum": ["none", "auto"]}]
    }


CREATE_V237, _p = _derive(CREATE_V233)
CREATE_V237["properties"]["server"]["required"].append("networks")
_p["networks"] = _networks_v237(False)

CREATE_V242, _p = _derive(CREATE_V237)
_p["networks"] = _networks_v237(True)
_p["block_device_mapping_v2"]["items"]["properties"]["tag"] = t.TAG

CREATE_V252, _p = _derive(CREATE_V242)
_p["tags"] = {"type": "array", "items": t.TAG, "maxItems": t.MAX_TAG_COUNT}

CREATE_V257, _p = _derive(CREATE_V252)
del _p["personality"]

CREATE_V263, _p = _derive(CREATE_V257)
_p["trusted_image_certificates"] = t.TRUSTED_CERTS

CREATE_V267, _p = _derive(CREATE_V263)
_p["block_device_mapping_v2"]["items"]["properties"]["volume_type"] = t.VOLUME_TYPE

CREATE_V274, _p = _derive(CREATE_V267)
_p["host"] = t.FQDN
_p["hypervisor_hostname"] = t.FQDN

CREATE_V290, _p = _derive(CREATE_V274)
_p["hostname"] = t.HOSTNAME

CREATE_V294, _p = _derive(CREATE_V290)
_p["hostname"] = t.FQDN
del _p
