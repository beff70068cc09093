"""A port's bindings (Neutron's ``binding-extended``): list, create, show, activate, delete
(decision 0072; the rules live in ``openkeel.network.embedded.port_bindings``)."""

from __future__ import annotations

from openkeel.network.embedded import port_bindings as bindings
from openkeel.network_api.request import NetworkRequest, Reply, mapping, string
from openkeel.network_api.routing import Endpoint, RouteTable

_ATTRS = {"host": string(), "vnic_type": string(64), "profile": mapping}


def list_port_bindings(req: NetworkRequest) -> Reply:
    found = bindings.list_bindings(req.service, req.caller, req.params["port_id"])
    return Reply({"bindings": found})


def create_port_binding(req: NetworkRequest) -> Reply:
    ref = req.resource("binding", _ATTRS, ("host",))
    made = bindings.create_binding(req.service, req.caller, req.params["port_id"], ref)
    return Reply({"binding": made}, 201)


def show_port_binding(req: NetworkRequest) -> Reply:
    found = bindings.show_binding(req.service, req.caller, req.params["port_id"], req.params["host"])  # fmt: skip
    return Reply({"binding": found})


def activate_port_binding(req: NetworkRequest) -> Reply:
    """Neutron answers the activated binding itself, not under ``binding``."""
    port_id, host = req.params["port_id"], req.params["host"]
    return Reply(bindings.activate_binding(req.service, req.caller, port_id, host))


def delete_port_binding(req: NetworkRequest) -> Reply:
    bindings.delete_binding(req.service, req.caller, req.params["port_id"], req.params["host"])
    return Reply(None, 204)


def register(table: RouteTable) -> None:
    url = "/v2.0/ports/{port_id}/bindings"
    table.add("GET", url, Endpoint(list_port_bindings))
    table.add("POST", url, Endpoint(create_port_binding))
    table.add("GET", url + "/{host}", Endpoint(show_port_binding))
    table.add("DELETE", url + "/{host}", Endpoint(delete_port_binding))
    table.add("PUT", url + "/{host}/activate", Endpoint(activate_port_binding))
