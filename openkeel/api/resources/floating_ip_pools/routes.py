"""Route of the ``os-floating-ip-pools`` proxy: the external networks by name (2.1-2.35, 404
after: Nova's proxy cap)."""

from __future__ import annotations

from typing import Any

from openkeel.api.request import ApiRequest
from openkeel.api.routing import RouteTable, endpoint
from openkeel.api.usecases.floating_ips import POOLS_POLICY, FloatingIps
from openkeel.api.validation import Versioned, loose_query

QUERY = Versioned.of(("2.1", loose_query()))


def list_floating_ip_pools(req: ApiRequest) -> dict[str, Any]:
    return {"floating_ip_pools": FloatingIps(req.services, req.context).pools()}


def register(table: RouteTable) -> None:
    table.add("GET", "/os-floating-ip-pools", endpoint(list_floating_ip_pools, until="2.35",
                                                       query=QUERY, policy=POOLS_POLICY))  # fmt: skip
