"""Routes of the ``os-tenant-networks`` proxy: index and show up to 2.35 (404 after, Nova's
proxy cap); its create and delete are Nova's 410 (api/resources/removed)."""

from __future__ import annotations

from typing import Any

from openkeel.api.request import ApiRequest
from openkeel.api.routing import RouteTable, endpoint
from openkeel.api.usecases import networks
from openkeel.api.validation import Versioned, loose_query

# Nova's query schemas here are empty (any parameter: its 500); every parameter is ignored.
QUERY = Versioned.of(("2.1", loose_query()))


def list_tenant_networks(req: ApiRequest) -> dict[str, Any]:
    return {"networks": networks.list_tenant_networks(req.services, req.context)}


def show_tenant_network(req: ApiRequest) -> dict[str, Any]:
    found = networks.show_tenant_network(req.services, req.context, req.params["id"])
    return {"network": found}


def register(table: RouteTable) -> None:
    policy = networks.TENANT_POLICY
    table.add("GET", "/os-tenant-networks", endpoint(list_tenant_networks, until="2.35",
                                                     query=QUERY, policy=policy % "list"))  # fmt: skip
    table.add("GET", "/os-tenant-networks/{id}", endpoint(show_tenant_network, until="2.35",
                                                          query=QUERY, policy=policy % "show"))  # fmt: skip
