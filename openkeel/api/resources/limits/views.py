"""The ``/limits`` body per microversion: Nova's absolute limit names and used counters."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from openkeel.api.request import ApiRequest
from openkeel.domain.quotas import QuotaDetail

_LIMIT_NAMES: dict[str, tuple[str, ...]] = {
    "ram": ("maxTotalRAMSize",),
    "instances": ("maxTotalInstances",),
    "cores": ("maxTotalCores",),
    "key_pairs": ("maxTotalKeypairs",),
    "floating_ips": ("maxTotalFloatingIps",),
    "metadata_items": ("maxServerMeta", "maxImageMeta"),
    "injected_files": ("maxPersonality",),
    "injected_file_content_bytes": ("maxPersonalitySize",),
    "security_groups": ("maxSecurityGroups",),
    "security_group_rules": ("maxSecurityGroupRules",),
    "server_groups": ("maxServerGroups",),
    "server_group_members": ("maxServerGroupMembers",),
}
_USED_NAMES: dict[str, str] = {
    "totalRAMUsed": "ram",
    "totalCoresUsed": "cores",
    "totalInstancesUsed": "instances",
    "totalFloatingIpsUsed": "floating_ips",
    "totalSecurityGroupsUsed": "security_groups",
    "totalServerGroupsUsed": "server_groups",
}
_HIDDEN_V236 = ("floating_ips", "security_groups", "security_group_rules")
_HIDDEN_V257 = (*_HIDDEN_V236, "injected_files", "injected_file_content_bytes")


def _hidden(req: ApiRequest) -> tuple[str, ...]:
    if req.at_least("2.57"):
        return _HIDDEN_V257
    if req.at_least("2.36"):
        return _HIDDEN_V236
    return ()


def limits(req: ApiRequest, details: Mapping[str, QuotaDetail]) -> dict[str, Any]:
    """``{"limits": {"rate": [], "absolute": {...}}}``; 2.39 drops ``maxImageMeta``."""
    hidden = _hidden(req)
    absolute: dict[str, int] = {}
    for resource, names in _LIMIT_NAMES.items():
        if resource in hidden or resource not in details:
            continue
        for name in names:
            if name != "maxImageMeta" or not req.at_least("2.39"):
                absolute[name] = details[resource].limit
    for name, resource in _USED_NAMES.items():
        if resource in details and resource not in hidden:
            absolute[name] = details[resource].in_use
    return {"limits": {"rate": [], "absolute": absolute}}
