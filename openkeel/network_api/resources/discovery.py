"""Versions, the v2.0 resource list, extensions and quotas."""

from __future__ import annotations

from typing import Any

from openkeel.network.embedded.faults import NotFound, PolicyNotAuthorized
from openkeel.network.embedded.service import QUOTAS
from openkeel.network_api.request import NetworkRequest, Reply
from openkeel.network_api.routing import Endpoint, RouteTable

# (alias, name, description) of what this subset serves.
EXTENSIONS = (
    ("agent", "agent", ""),
    ("auto-allocated-topology", "Auto Allocated Topology Services", "Auto Allocated Topology Services."),
    ("allowed-address-pairs", "Allowed Address Pairs", "Provides allowed address pairs"),
    ("binding", "Port Binding", "Expose port bindings of a virtual port to external application"),
    ("binding-extended", "Port Bindings Extended", "Expose port bindings of a virtual port to external application"),
    ("external-net", "Neutron external network", "Adds external network attribute to network resource."),
    ("net-mtu", "Network MTU", "Provides MTU attribute for a network resource."),
    ("port-resource-request", "Port Resource Request", "Expose resource request to Port"),
    ("port-resource-request-groups", "Port Resource Request Groups", "Support requesting multiple groups of resources"),
    ("port-security", "Port Security", "Provides port security"),
    ("project-id", "project_id field enabled", "Extension that indicates that project_id field is enabled."),
    ("qos", "Quality of Service", "The Quality of Service extension."),
    ("qos-bw-minimum-ingress", "Ingress minimum bandwidth rule", "Allow to configure QoS minumum bandwidth rule with ingress direction."),
    ("qos-pps-minimum", "QoS minimum packet rate rule", "Adds support for minimum packet rate rule"),
    ("ext-gw-mode", "Neutron L3 Configurable external gateway mode", "Extension of the router abstraction for specifying whether SNAT should occur on the external gateway"),
    ("quotas", "Quota management support", "Expose functions for quotas management per project"),
    ("router", "Neutron L3 Router", "Router abstraction for basic L3 forwarding between L2 Neutron networks and access to external networks via a NAT gateway."),
    ("security-group", "security-group", "The security groups extension."),
    ("standard-attr-description", "standard-attr-description", "Extension to add descriptions to standard attributes"),
    ("standard-attr-revisions", "Resource revision numbers", "This extension will display the revision number of neutron resources."),
    ("standard-attr-timestamp", "Resource timestamps", "Adds created_at and updated_at fields to all Neutron resources that have Neutron standard attributes."),
    ("stateful-security-group", "Stateful security group", "Indicates if the security group is stateful or not"),
)  # fmt: skip


def versions(req: NetworkRequest) -> Reply:
    link = {"href": f"{req.base}/v2.0/", "rel": "self"}
    return Reply({"versions": [{"id": "v2.0", "status": "CURRENT", "links": [link]}]})


def resources(req: NetworkRequest) -> Reply:
    names = (
        "network",
        "subnet",
        "port",
        "security_group",
        "security_group_rule",
        "floatingip",
        "router",
    )
    items = [
        {"name": n, "collection": f"{n}s",
         "links": [{"href": f"{req.base}/v2.0/{n.replace('_', '-')}s", "rel": "self"}]}
        for n in names
    ]  # fmt: skip
    return Reply({"resources": items})


def _extension(alias: str, name: str, description: str) -> dict[str, Any]:
    return {"alias": alias, "name": name, "description": description,
            "updated": "2013-02-03T10:00:00-00:00", "links": []}  # fmt: skip


def extensions(req: NetworkRequest) -> Reply:
    return Reply({"extensions": [_extension(*e) for e in EXTENSIONS]})


def extension(req: NetworkRequest) -> Reply:
    for item in EXTENSIONS:
        if item[0] == req.params["alias"]:
            return Reply({"extension": _extension(*item)})
    raise NotFound(f"Extension with alias {req.params['alias']} does not exist")


def quota(req: NetworkRequest) -> Reply:
    project = req.params["project_id"]
    if project != req.caller.project_id and not req.caller.is_admin:
        raise PolicyNotAuthorized("rule:get_quota")
    return Reply({"quota": dict(QUOTAS)})


def quota_details(req: NetworkRequest) -> Reply:
    project = req.params["project_id"]
    if project != req.caller.project_id and not req.caller.is_admin:
        raise PolicyNotAuthorized("rule:get_quota")
    used = req.service.usage(project)
    return Reply({"quota": {k: {"limit": v, "used": used.get(k, 0), "reserved": 0}
                            for k, v in QUOTAS.items()}})  # fmt: skip


def quotas(req: NetworkRequest) -> Reply:
    if not req.caller.is_admin:
        raise PolicyNotAuthorized("rule:get_quota")
    return Reply({"quotas": []})


def register(table: RouteTable) -> None:
    table.add("GET", "/", Endpoint(versions, anonymous=True))
    table.add("GET", "/v2.0", Endpoint(resources))
    table.add("GET", "/v2.0/extensions", Endpoint(extensions))
    table.add("GET", "/v2.0/extensions/{alias}", Endpoint(extension))
    table.add("GET", "/v2.0/quotas", Endpoint(quotas))
    table.add("GET", "/v2.0/quotas/{project_id}", Endpoint(quota))
    table.add("GET", "/v2.0/quotas/{project_id}/details", Endpoint(quota_details))
