"""Response bodies of ``/os-quota-class-sets`` per microversion."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from openkeel.api.request import ApiRequest
from openkeel.domain.quotas import NETWORK_RESOURCES, PERSONALITY_RESOURCES, RESOURCES

# Shown by v2 but not by v2.1 before 2.50 (Nova bug 1693168).
_SERVER_GROUP_RESOURCES = ("server_group_members", "server_groups")


def _hidden(req: ApiRequest) -> tuple[str, ...]:
    if req.at_least("2.57"):
        return NETWORK_RESOURCES + PERSONALITY_RESOURCES
    if req.at_least("2.50"):
        return NETWORK_RESOURCES
    return _SERVER_GROUP_RESOURCES


def quota_class_set(
    req: ApiRequest, values: Mapping[str, int], class_name: str | None
) -> dict[str, Any]:
    """``{"quota_class_set": {...}}``, with ``id`` on show only."""
    hidden = _hidden(req)
    body: dict[str, Any] = {} if class_name is None else {"id": class_name}
    body.update({r: values[r] for r in RESOURCES if r not in hidden})
    return {"quota_class_set": body}
