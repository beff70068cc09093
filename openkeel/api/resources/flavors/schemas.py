"""Request and query schemas of the flavor, extra spec and flavor access APIs, per microversion.

Each schema is named after the version that introduced it and written as a delta of the one
before; ``routes.py`` binds them to endpoints. Constraints reproduce Nova's so that the 400
messages match.
"""

from __future__ import annotations

import copy
import re
import unicodedata
from typing import Any

from openkeel.api.validation import Versioned, loose_query, multi, strict_query
from openkeel.domain.flavors import MAX_INT, SORT_KEYS, SQL_SP_FLOAT_MAX


def _printable(char: str) -> bool:
    category = unicodedata.category(char)
    return not category.startswith("C") and (not category.startswith("Z") or category == "Zs")


def _printable_class() -> str:
    """The body of a regex character class of every printable BMP character, in runs
    ``a-z`` as Nova writes it, so that pattern errors quote the same regex."""
    parts: list[str] = []
    start: int | None = None
    for code in range(0xFFFF + 1):
        inside = code < 0xFFFF and _printable(chr(code))
        if inside and start is None:
            start = code
        elif not inside and start is not None:
            parts.append(re.escape(chr(start)))
            if code - 1 != start:
                parts.append("-" + re.escape(chr(code - 1)))
            start = None
    return "".join(parts)


DESCRIPTION_PATTERN = f"^[{_printable_class()}]*$"

_NAME = {"type": "string", "minLength": 1, "maxLength": 255, "format": "name"}
_NAME_V20 = {**_NAME, "format": "name_with_leading_trailing_spaces"}
_POSITIVE = {"type": ["integer", "string"], "pattern": "^[0-9]+$", "minimum": 1, "maximum": MAX_INT}
_NON_NEGATIVE = {**_POSITIVE, "minimum": 0}
_BOOLEAN = {
    "type": ["boolean", "string"],
    "enum": [
        *(True, "True", "TRUE", "true", "1", "ON", "On", "on", "YES", "Yes", "yes"),
        *(False, "False", "FALSE", "false", "0", "OFF", "Off", "off", "NO", "No", "no"),
    ],
}
_DESCRIPTION = {
    "type": ["string", "null"],
    "minLength": 0,
    "maxLength": 65535,
    "pattern": DESCRIPTION_PATTERN,
}


def _flavor_body(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "flavor": {
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": False,
            }
        },
        "required": ["flavor"],
        "additionalProperties": False,
    }


create = _flavor_body(
    {
        "name": _NAME,
        "id": {
            "type": ["string", "number", "null"],
            "minLength": 1,
            "maxLength": 255,
            "pattern": "^(?! )[a-zA-Z0-9. _-]+(?<! )$",
        },
        "ram": _POSITIVE,
        "vcpus": _POSITIVE,
        "disk": _NON_NEGATIVE,
        "OS-FLV-EXT-DATA:ephemeral": _NON_NEGATIVE,
        "swap": _NON_NEGATIVE,
        "rxtx_factor": {
            "type": ["number", "string"],
            "pattern": r"^[0-9]+(\.[0-9]+)?$",
            "exclusiveMinimum": 0,
            "maximum": SQL_SP_FLOAT_MAX,
        },
        "os-flavor-access:is_public": _BOOLEAN,
    },
    ["name", "ram", "vcpus", "disk"],
)

create_v20 = copy.deepcopy(create)
create_v20["properties"]["flavor"]["properties"]["name"] = _NAME_V20

create_v255 = copy.deepcopy(create)
create_v255["properties"]["flavor"]["properties"]["description"] = _DESCRIPTION

create_v2102 = copy.deepcopy(create_v255)
del create_v2102["properties"]["flavor"]["properties"]["rxtx_factor"]

update_v255 = _flavor_body({"description": _DESCRIPTION}, ["description"])

_NON_NEGATIVE_QUERY_INT = {
    "type": ["integer", "string"],
    "pattern": "^[0-9]*$",
    "minimum": 0,
    "minLength": 1,
}
_STRING = {"type": "string"}

_index_properties: dict[str, Any] = {
    "limit": multi(_NON_NEGATIVE_QUERY_INT),
    "marker": multi(_STRING),
    "is_public": multi(_STRING),
    "minRam": multi(_STRING),
    "minDisk": multi(_STRING),
    "sort_key": multi({"type": "string", "enum": list(SORT_KEYS)}),
    "sort_dir": multi({"type": "string", "enum": ["asc", "desc"]}),
}
index_query = loose_query(_index_properties)
index_query_v275 = strict_query(copy.deepcopy(_index_properties))
index_query_v2102 = copy.deepcopy(index_query_v275)
index_query_v2102["properties"]["name"] = multi(_STRING)
index_query_v2102["properties"]["sort_key"]["items"]["enum"].remove("rxtx_factor")

# Every other GET of this resource family takes no parameter: ignored, then 400 from 2.102.
no_query = loose_query()
no_query_v2102 = strict_query()

_METADATA_KEY = "^[a-zA-Z0-9-_:. ]{1,255}$"
_specs = {
    "type": "object",
    "patternProperties": {_METADATA_KEY: {"type": ["string", "number"], "maxLength": 255}},
    "additionalProperties": False,
}
extra_specs_create = {
    "type": "object",
    "properties": {"extra_specs": _specs},
    "required": ["extra_specs"],
    "additionalProperties": False,
}
extra_spec_update = {**copy.deepcopy(_specs), "minProperties": 1, "maxProperties": 1}


def _tenant_action(key: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            key: {
                "type": "object",
                "properties": {"tenant": {"type": "string", "minLength": 1, "maxLength": 255}},
                "required": ["tenant"],
                "additionalProperties": False,
            }
        },
        "required": [key],
        "additionalProperties": False,
    }


add_tenant_access = _tenant_action("addTenantAccess")
remove_tenant_access = _tenant_action("removeTenantAccess")

LIST_QUERY = Versioned.of(
    ("2.0", index_query), ("2.75", index_query_v275), ("2.102", index_query_v2102)
)
SHOW_QUERY = Versioned.of(("2.0", no_query), ("2.102", no_query_v2102))
CREATE_BODY = Versioned.of(
    ("2.0", create_v20), ("2.1", create), ("2.55", create_v255), ("2.102", create_v2102)
)
UPDATE_BODY = Versioned.of(("2.55", update_v255))
SPECS_CREATE_BODY = Versioned.of(("2.0", extra_specs_create))
SPEC_UPDATE_BODY = Versioned.of(("2.0", extra_spec_update))
ADD_TENANT_BODY = Versioned.of(("2.0", add_tenant_access))
REMOVE_TENANT_BODY = Versioned.of(("2.0", remove_tenant_access))
