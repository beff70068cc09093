"""``GET /servers`` and ``/servers/detail`` query schemas per microversion; show query schemas.

Nova keeps unknown parameters before 2.75 (they are stripped) and rejects them from 2.75.
"""

from __future__ import annotations

import copy
from typing import Any

from openkeel.api.resources.servers import schema_types as t
from openkeel.api.usecases.servers.list_options import (
    IGNORED_SORT_KEYS,
    IGNORED_SORT_KEYS_V273,
    JOINED_TABLE_FILTERS,
    SORT_KEYS,
)
from openkeel.api.validation import multi

_Q = t.QUERY_PARAM
_R = t.QUERY_REGEX_PARAM
_PLAIN = [
    "user_id",
    "project_id",
    "tenant_id",
    "launch_index",
    "image_ref",
    "image",
    "vm_state",
    "task_state",
    "host",
    "uuid",
    "sort_dir",
    "all_tenants",
    "soft_deleted",
    "deleted",
    "status",
    "marker",
]
_REGEX = [
    "kernel_id",
    "ramdisk_id",
    "hostname",
    "key_name",
    "power_state",
    "node",
    "flavor",
    "reservation_id",
    "launched_at",
    "terminated_at",
    "availability_zone",
    "name",
    "display_name",
    "description",
    "display_description",
    "locked_by",
    "root_device_name",
    "config_drive",
    "access_ip_v4",
    "access_ip_v6",
    "auto_disk_config",
    "progress",
    "ip",
    "ip6",
    "created_at",
]
_DATETIMES = multi({"type": "string", "format": "date-time"})


def _sort_key(values: list[str]) -> dict[str, Any]:
    return multi({"type": "string", "enum": values})


INDEX_V21: dict[str, Any] = {
    "type": "object",
    "properties": {
        **{name: _Q for name in _PLAIN},
        **{name: _R for name in _REGEX},
        **{name: _Q for name in JOINED_TABLE_FILTERS},
        "sort_key": _sort_key([*SORT_KEYS, *IGNORED_SORT_KEYS]),
        "changes-since": _DATETIMES,
        "limit": multi(t.NON_NEGATIVE_INTEGER),
    },
    "additionalProperties": True,
    # Internal attributes (leading underscore) are kept so the handler can refuse them.
    "patternProperties": {"^_": _Q},
}

INDEX_V226 = copy.deepcopy(INDEX_V21)
INDEX_V226["properties"].update(
    {name: _R for name in ("tags", "tags-any", "not-tags", "not-tags-any")}
)

INDEX_V266 = copy.deepcopy(INDEX_V226)
INDEX_V266["properties"]["changes-before"] = _DATETIMES

INDEX_V273 = copy.deepcopy(INDEX_V266)
INDEX_V273["properties"]["sort_key"] = _sort_key(["locked", *SORT_KEYS, *IGNORED_SORT_KEYS_V273])
INDEX_V273["properties"]["locked"] = _Q

INDEX_V275 = copy.deepcopy(INDEX_V273)
INDEX_V275["properties"]["sort_key"] = _sort_key(["locked", *SORT_KEYS])
INDEX_V275["additionalProperties"] = False

SHOW_V21: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": True}
SHOW_V2102: dict[str, Any] = {**SHOW_V21, "additionalProperties": False}
