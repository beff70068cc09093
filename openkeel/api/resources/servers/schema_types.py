"""Parameter shapes shared by the servers request and query schemas (Nova's constraints).

Imported by the ``schemas_*`` modules of this package only; each constraint mirrors Nova's so the
400 messages quote the same schema fragments.
"""

from __future__ import annotations

from typing import Any

from openkeel.api.resources.flavors.schemas import DESCRIPTION_PATTERN
from openkeel.api.validation import multi

MAX_INT = 0x7FFFFFFF
MAX_TAG_LENGTH = 60
MAX_TAG_COUNT = 50

NAME: dict[str, Any] = {"type": "string", "format": "name", "minLength": 1, "maxLength": 255}
NAME_V20: dict[str, Any] = {**NAME, "format": "name_with_leading_trailing_spaces"}
NAME_OR_NONE: dict[str, Any] = {
    "oneOf": [{"type": "string", "minLength": 1, "maxLength": 255}, {"type": "null"}]
}
BOOLEAN: dict[str, Any] = {
    "type": ["boolean", "string"],
    "enum": [
        *(True, "True", "TRUE", "true", "1", "ON", "On", "on", "YES", "Yes", "yes"),
        *(False, "False", "FALSE", "false", "0", "OFF", "Off", "off", "NO", "No", "no"),
    ],
}
POSITIVE_INTEGER: dict[str, Any] = {
    "type": ["integer", "string"],
    "pattern": "^[0-9]*$",
    "minimum": 1,
    "minLength": 1,
}
NON_NEGATIVE_INTEGER: dict[str, Any] = {**POSITIVE_INTEGER, "minimum": 0}
HOSTNAME: dict[str, Any] = {
    "type": "string",
    "pattern": "^[a-zA-Z0-9]+[a-zA-Z0-9-]*[a-zA-Z0-9]+$",
    "minLength": 2,
    "maxLength": 63,
}
FQDN: dict[str, Any] = {
    "type": "string",
    "pattern": "^[a-zA-Z0-9-._]*$",
    "minLength": 1,
    "maxLength": 255,
}
DESCRIPTION: dict[str, Any] = {
    "type": ["string", "null"],
    "pattern": DESCRIPTION_PATTERN,
    "minLength": 0,
    "maxLength": 255,
}
UUID: dict[str, Any] = {"type": "string", "format": "uuid"}
IMAGE_ID_OR_EMPTY: dict[str, Any] = {
    "oneOf": [{"type": "string", "format": "uuid"}, {"type": "string", "maxLength": 0}]
}
VOLUME_TYPE: dict[str, Any] = {"type": ["string", "null"], "minLength": 0, "maxLength": 255}
ADMIN_PASSWORD: dict[str, Any] = {"type": "string"}
FLAVOR_REF: dict[str, Any] = {"type": ["string", "integer"], "minLength": 1}
METADATA: dict[str, Any] = {
    "type": "object",
    "patternProperties": {"^[a-zA-Z0-9-_:. ]{1,255}$": {"type": "string", "maxLength": 255}},
    "additionalProperties": False,
}
IP_ADDRESS: dict[str, Any] = {"type": "string", "oneOf": [{"format": "ipv4"}, {"format": "ipv6"}]}
ACCESS_IPV4: dict[str, Any] = {"type": "string", "format": "ipv4"}
ACCESS_IPV6: dict[str, Any] = {"type": "string", "format": "ipv6"}
VOLUME_SIZE: dict[str, Any] = {
    "type": ["integer", "string"],
    "pattern": "^[0-9]+$",
    "minimum": 1,
    "maximum": MAX_INT,
}
DISK_CONFIG: dict[str, Any] = {"type": "string", "enum": ["AUTO", "MANUAL"]}
PERSONALITY: dict[str, Any] = {
    "type": "array",
    "items": {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "contents": {"type": "string", "format": "base64"},
        },
        "additionalProperties": False,
    },
}
TAG: dict[str, Any] = {
    "type": "string",
    "pattern": "^[^,/]*$",
    "minLength": 1,
    "maxLength": MAX_TAG_LENGTH,
}
TRUSTED_CERTS: dict[str, Any] = {
    "type": ["array", "null"],
    "minItems": 1,
    "maxItems": 50,
    "uniqueItems": True,
    "items": {"type": "string", "minLength": 1},
}
USER_DATA: dict[str, Any] = {"type": "string", "format": "base64", "maxLength": 65535}

QUERY_PARAM: dict[str, Any] = multi({"type": "string"})
QUERY_REGEX_PARAM: dict[str, Any] = multi({"type": "string", "format": "regex"})
