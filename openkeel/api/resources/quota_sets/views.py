"""Response bodies of ``/os-quota-sets`` per microversion."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from openkeel.api.request import ApiRequest
from openkeel.domain.quotas import NETWORK_RESOURCES, PERSONALITY_RESOURCES, RESOURCES, QuotaDetail


def hidden_resources(req: ApiRequest) -> tuple[str, ...]:
    """Resources the negotiated version no longer shows (2.36 network, 2.57 personality)."""
    if req.at_least("2.57"):
        return NETWORK_RESOURCES + PERSONALITY_RESOURCES
    if req.at_least("2.36"):
        return NETWORK_RESOURCES
    return ()


def quota_set(req: ApiRequest, values: Mapping[str, Any], set_id: str | None) -> dict[str, Any]:
    """``{"quota_set": {...}}`` with ``id`` when given (update answers without it)."""
    hidden = hidden_resources(req)
    body: dict[str, Any] = {} if set_id is None else {"id": set_id}
    body.update({r: values[r] for r in RESOURCES if r not in hidden and r in values})
    return {"quota_set": body}


def detail(req: ApiRequest, details: Mapping[str, QuotaDetail], set_id: str) -> dict[str, Any]:
    """The detail body: ``{"in_use", "limit", "reserved"}`` per resource."""
    values = {
        r: {"in_use": d.in_use, "limit": d.limit, "reserved": d.reserved}
        for r, d in details.items()
    }
    return quota_set(req, values, set_id)
