"""Vocabulary of ``GET /servers``: sort keys, filters allowed to non-admins per microversion.

Pure data shared by the query schemas (``resources/servers/schemas_query.py``) and the listing
use case (``listing.py``); the values are Nova's.
"""

from __future__ import annotations

SORT_KEYS: tuple[str, ...] = (
    "access_ip_v4", "access_ip_v6", "auto_disk_config", "availability_zone", "config_drive",
    "created_at", "display_description", "display_name", "host", "hostname", "image_ref",
    "instance_type_id", "kernel_id", "key_name", "launch_index", "launched_at", "locked_by",
    "node", "power_state", "progress", "project_id", "ramdisk_id", "root_device_name",
    "task_state", "terminated_at", "updated_at", "user_id", "uuid", "vm_state",
)  # fmt: skip

# Accepted by the schema but silently dropped (Nova kept them for compatibility).
IGNORED_SORT_KEYS: tuple[str, ...] = (
    "architecture", "cell_name", "cleaned", "default_ephemeral_device", "default_swap_device",
    "deleted", "deleted_at", "disable_terminate", "ephemeral_gb", "ephemeral_key_uuid", "id",
    "key_data", "launched_on", "locked", "memory_mb", "os_type", "reservation_id", "root_gb",
    "shutdown_terminate", "user_data", "vcpus", "vm_mode",
)  # fmt: skip
IGNORED_SORT_KEYS_V273: tuple[str, ...] = tuple(k for k in IGNORED_SORT_KEYS if k != "locked")
ADMIN_ONLY_SORT_KEYS = frozenset({"host", "node"})

# Names of joined tables: accepted by the loose schema, then refused with a 400.
JOINED_TABLE_FILTERS: tuple[str, ...] = (
    "block_device_mapping", "services", "metadata", "system_metadata", "info_cache",
    "security_groups", "pci_devices",
)  # fmt: skip

TAG_FILTERS: tuple[str, ...] = ("tags", "tags-any", "not-tags", "not-tags-any")
PAGING_SORTING: tuple[str, ...] = ("sort_key", "sort_dir", "limit", "marker")

_BASE_USER_FILTERS = (
    "reservation_id",
    "name",
    "status",
    "image",
    "flavor",
    "ip",
    "changes-since",
    "all_tenants",
)
_USER_FILTERS_BY_VERSION: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("2.5", ("ip6",)),
    ("2.26", TAG_FILTERS),
    ("2.66", ("changes-before",)),
    ("2.73", ("locked",)),
    (
        "2.83",
        (
            "availability_zone", "config_drive", "key_name", "created_at", "launched_at",
            "terminated_at", "power_state", "task_state", "vm_state", "progress", "user_id",
        ),
    ),
    ("2.90", ("hostname",)),
)  # fmt: skip


def user_filters(at_least: object) -> frozenset[str]:
    """Filters a caller without ``allow_all_filters`` keeps; ``at_least(version) -> bool``."""
    allowed = set(_BASE_USER_FILTERS)
    for version, names in _USER_FILTERS_BY_VERSION:
        if at_least(version):  # type: ignore[operator]
            allowed.update(names)
    return frozenset(allowed)
