"""``/v2.0/auto-allocated-topology/{project_id}``: GET (``fields=dry-run`` checks only) and
DELETE, as Neutron's auto_allocate service plugin (decision 0074)."""

from __future__ import annotations

from openkeel.network.embedded import auto_allocate
from openkeel.network_api.request import NetworkRequest, Reply
from openkeel.network_api.routing import Endpoint, RouteTable

PATH = "/v2.0/auto-allocated-topology/{project_id}"


def show(req: NetworkRequest) -> Reply:
    found = auto_allocate.get_topology(
        req.service, req.caller, req.params["project_id"], req.values("fields")
    )
    return Reply({"auto_allocated_topology": found})


def delete(req: NetworkRequest) -> Reply:
    auto_allocate.delete_topology(req.service, req.caller, req.params["project_id"])
    return Reply(None, 204)


def register(table: RouteTable) -> None:
    table.add("GET", PATH, Endpoint(show))
    table.add("DELETE", PATH, Endpoint(delete))
