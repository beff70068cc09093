"""Networks, subnets, ports, security groups and rules, floating IPs: Neutron's collection and
member verbs, list filters (any attribute, repeated values, ``fixed_ips=ip_address=...``),
``fields`` and ``limit``/``marker`` paging."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from openkeel.network.embedded import qos
from openkeel.network.embedded.faults import BadRequest
from openkeel.network.embedded.service import Caller, NetworkService, Row
from openkeel.network_api import views
from openkeel.network_api.request import (
    Check,
    NetworkRequest,
    Reply,
    anything,
    boolean,
    fixed_ip,
    integer,
    listing,
    mapping,
    string,
    uuid_value,
)
from openkeel.network_api.routing import Endpoint, RouteTable

_STD: dict[str, Check] = {
    "name": string(), "description": string(), "project_id": string(), "tenant_id": string(),
}  # fmt: skip


@dataclass(frozen=True)
class Kind:
    """One resource: its names, attributes, service verbs and view."""

    collection: str  # "networks"
    singular: str  # "network"
    attrs: Mapping[str, Check]
    required: tuple[str, ...]
    view: Callable[[Row, Caller, NetworkService], dict[str, Any]]
    create: Callable[[NetworkService, Caller, dict[str, Any]], Row]
    update: Callable[[NetworkService, Caller, str, dict[str, Any]], Row] | None
    delete: Callable[[NetworkService, Caller, str], None]
    path: str = ""

    @property
    def url(self) -> str:
        return f"/v2.0/{self.path or self.collection.replace('_', '-')}"


KINDS = (
    Kind(
        "networks", "network",
        {**_STD, "admin_state_up": boolean, "shared": boolean, "router:external": boolean,
         "mtu": integer(68, 9216), "provider:network_type": string(32),
         "provider:physical_network": string(nullable=True),
         "provider:segmentation_id": integer(nullable=True), "port_security_enabled": boolean,
         "availability_zone_hints": listing(), "qos_policy_id": uuid_value(nullable=True), "is_default": boolean},
        (), lambda r, c, s: views.network(r, c, s),
        qos.creating(NetworkService.create_network), qos.updating(NetworkService.update_network),
        qos.deleting(NetworkService.delete_network),
    ),
    Kind(
        "subnets", "subnet",
        {**_STD, "network_id": uuid_value(), "cidr": string(64), "ip_version": integer(4, 6, False),
         "gateway_ip": string(64, nullable=True), "enable_dhcp": boolean,
         "allocation_pools": listing(mapping), "dns_nameservers": listing(string(64)),
         "host_routes": listing(mapping), "ipv6_ra_mode": string(nullable=True),
         "ipv6_address_mode": string(nullable=True), "subnetpool_id": string(nullable=True),
         "service_types": listing()},
        ("network_id", "ip_version"), lambda r, c, s: views.subnet(r),
        NetworkService.create_subnet, NetworkService.update_subnet, NetworkService.delete_subnet,
    ),
    Kind(
        "ports", "port",
        {**_STD, "network_id": uuid_value(), "admin_state_up": boolean, "mac_address": string(32),
         "fixed_ips": listing(fixed_ip), "device_id": string(), "device_owner": string(),
         "security_groups": listing(uuid_value()), "port_security_enabled": boolean,
         "allowed_address_pairs": listing(mapping), "binding:host_id": string(nullable=True),
         "binding:profile": anything, "binding:vnic_type": string(64),
         "extra_dhcp_opts": listing(), "dns_name": string(),
         "qos_policy_id": uuid_value(nullable=True)},
        ("network_id",), lambda r, c, s: views.port(r, c, s),
        qos.creating(NetworkService.create_port), qos.updating(NetworkService.update_port),
        qos.deleting(NetworkService.delete_port),
    ),
    Kind(
        "security_groups", "security_group",
        {**_STD, "stateful": boolean},
        (), lambda r, c, s: views.security_group(r, s),
        NetworkService.create_security_group, NetworkService.update_security_group,
        NetworkService.delete_security_group,
    ),
    Kind(
        "security_group_rules", "security_group_rule",
        {"description": string(), "project_id": string(), "tenant_id": string(),
         "security_group_id": uuid_value(), "direction": string(16), "ethertype": string(8),
         "protocol": anything, "port_range_min": integer(nullable=True),
         "port_range_max": integer(nullable=True), "remote_ip_prefix": string(64, nullable=True),
         "remote_group_id": uuid_value(nullable=True),
         "remote_address_group_id": uuid_value(nullable=True)},
        ("security_group_id", "direction"),
        lambda r, c, s: views.rule(r, s.store.default_security_group(r["project_id"])),
        NetworkService.create_rule, None, NetworkService.delete_rule,
    ),
    Kind(
        "floatingips", "floatingip",
        {"description": string(), "project_id": string(), "tenant_id": string(),
         "floating_network_id": uuid_value(), "floating_ip_address": string(64),
         "port_id": uuid_value(nullable=True), "fixed_ip_address": string(64, nullable=True),
         "subnet_id": uuid_value(nullable=True), "dns_name": string(), "dns_domain": string()},
        ("floating_network_id",), lambda r, c, s: views.floating_ip(r),
        NetworkService.create_floating_ip, NetworkService.update_floating_ip,
        NetworkService.delete_floating_ip,
    ),
    Kind(
        "qos_policies", "policy",
        {**_STD, "shared": boolean, "is_default": boolean},
        (), lambda r, c, s: views.qos_policy(r, s),
        qos.create_policy, qos.update_policy, qos.delete_policy, path="qos/policies",
    ),
    Kind(
        "routers", "router",
        {**_STD, "admin_state_up": boolean, "external_gateway_info": anything,
         "routes": listing()},
        (), lambda r, c, s: views.router(r, c, s),
        NetworkService.create_router, NetworkService.update_router, NetworkService.delete_router,
    ),
)  # fmt: skip


def _interface(add: bool) -> Callable[[NetworkRequest], Reply]:
    """PUT /v2.0/routers/{id}/add_router_interface and remove_router_interface."""

    def handler(req: NetworkRequest) -> Reply:
        ref = req.json_object()
        verb = (
            NetworkService.add_router_interface if add else NetworkService.remove_router_interface
        )
        return Reply(verb(req.service, req.caller, req.params["id"], ref))

    return handler


def _matches(item: Mapping[str, Any], filters: list[tuple[str, str]]) -> bool:
    wanted: dict[str, list[str]] = {}
    for key, value in filters:
        wanted.setdefault(key, []).append(value)
    for key, values in wanted.items():
        if key == "fixed_ips":
            held = item.get("fixed_ips") or []
            for value in values:
                attr, _, expected = value.partition("=")
                if not any(str(f.get(attr)) == expected for f in held):
                    return False
            continue
        if key not in item:
            continue  # Neutron ignores filters on attributes a resource does not have
        actual = item[key]
        if isinstance(actual, list):
            if not any(str(v) in {str(a) for a in actual} for v in values):
                return False
        elif _text(actual) not in {v.lower() if isinstance(actual, bool) else v for v in values}:
            return False
    return True


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def _fields(req: NetworkRequest, item: dict[str, Any]) -> dict[str, Any]:
    fields = req.values("fields")
    return {k: v for k, v in item.items() if k in fields} if fields else item


def _handlers(kind: Kind) -> dict[str, Callable[[NetworkRequest], Reply]]:
    def list_(req: NetworkRequest) -> Reply:
        items = [kind.view(r, req.caller, req.service)
                 for r in req.service.visible(req.caller, kind.collection)]  # fmt: skip
        items = [i for i in items if _matches(i, req.filters())]
        body: dict[str, Any] = {}
        limit = req.values("limit")
        if limit:
            try:
                size = int(limit[-1])
            except ValueError:
                raise BadRequest(f"Invalid input for limit: '{limit[-1]}'") from None
            marker = req.values("marker")
            if marker:
                ids = [i["id"] for i in items]
                items = items[ids.index(marker[-1]) + 1 :] if marker[-1] in ids else []
            if size > 0 and len(items) > size:
                items = items[:size]
                href = f"{req.base}{kind.url}?limit={size}&marker={items[-1]['id']}"
                body[f"{kind.collection}_links"] = [{"rel": "next", "href": href}]
        body[kind.collection] = [_fields(req, i) for i in items]
        return Reply(body)

    def show(req: NetworkRequest) -> Reply:
        row = req.service.show(req.caller, kind.collection, req.params["id"])
        return Reply({kind.singular: _fields(req, kind.view(row, req.caller, req.service))})

    def create(req: NetworkRequest) -> Reply:
        ref = req.resource(kind.singular, kind.attrs, kind.required)
        row = kind.create(req.service, req.caller, ref)
        return Reply({kind.singular: kind.view(row, req.caller, req.service)}, 201)

    def update(req: NetworkRequest) -> Reply:
        assert kind.update is not None
        attrs = {k: v for k, v in kind.attrs.items()
                 if k not in ("network_id", "project_id", "tenant_id", "floating_network_id")}  # fmt: skip
        ref = req.resource(kind.singular, attrs)
        row = kind.update(req.service, req.caller, req.params["id"], ref)
        return Reply({kind.singular: kind.view(row, req.caller, req.service)})

    def delete(req: NetworkRequest) -> Reply:
        kind.delete(req.service, req.caller, req.params["id"])
        return Reply(None, 204)

    return {"list": list_, "show": show, "create": create, "update": update, "delete": delete}


def register(table: RouteTable) -> None:
    for kind in KINDS:
        verbs = _handlers(kind)
        table.add("GET", kind.url, Endpoint(verbs["list"]))
        table.add("POST", kind.url, Endpoint(verbs["create"]))
        table.add("GET", kind.url + "/{id}", Endpoint(verbs["show"]))
        if kind.update is not None:
            table.add("PUT", kind.url + "/{id}", Endpoint(verbs["update"]))
        table.add("DELETE", kind.url + "/{id}", Endpoint(verbs["delete"]))
    table.add("PUT", "/v2.0/routers/{id}/add_router_interface", Endpoint(_interface(True)))
    table.add("PUT", "/v2.0/routers/{id}/remove_router_interface", Endpoint(_interface(False)))
