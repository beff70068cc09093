"""Neutron's JSON forms of the network rows (admin-only attributes for admins only)."""

from __future__ import annotations

import datetime
from typing import Any

from openkeel.db.network_store import Row
from openkeel.network.embedded import qos
from openkeel.network.embedded.service import Caller, NetworkService


def _stamp(moment: datetime.datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _standard(row: Row) -> dict[str, Any]:
    return {
        "id": row["id"],
        "name": row["name"],
        "tenant_id": row["project_id"],
        "project_id": row["project_id"],
        "description": row["description"],
        "tags": [],
        "created_at": _stamp(row["created_at"]),
        "updated_at": _stamp(row["updated_at"]),
        "revision_number": row["revision_number"],
    }


def network(row: Row, caller: Caller, service: NetworkService) -> dict[str, Any]:
    subnets = [s["id"] for s in service.store.list("subnets", network_id=row["id"])]
    out = {
        **_standard(row),
        "admin_state_up": row["admin_state_up"],
        "status": "ACTIVE",
        "subnets": subnets,
        "shared": row["shared"],
        "router:external": row["external"],
        "mtu": row["mtu"],
        "availability_zone_hints": [],
        "availability_zones": ["nova"],
        "ipv4_address_scope": None,
        "ipv6_address_scope": None,
        "port_security_enabled": True,
        "l2_adjacency": True,
        "qos_policy_id": qos.policy_of(service, row["id"]),
    }
    if row["external"]:  # Neutron shows is_default on external networks only
        out["is_default"] = service.default_external() == row["id"]
    if caller.is_admin:
        out.update({"provider:network_type": row["network_type"],
                    "provider:physical_network": "public" if row["network_type"] == "flat" else None,
                    "provider:segmentation_id": None})  # fmt: skip
    return out


def subnet(row: Row) -> dict[str, Any]:
    return {
        **_standard(row),
        "network_id": row["network_id"],
        "ip_version": row["ip_version"],
        "cidr": row["cidr"],
        "gateway_ip": row["gateway_ip"],
        "enable_dhcp": row["enable_dhcp"],
        "allocation_pools": row["allocation_pools"],
        "dns_nameservers": row["dns_nameservers"],
        "host_routes": row["host_routes"],
        "ipv6_ra_mode": None,
        "ipv6_address_mode": None,
        "subnetpool_id": None,
        "service_types": [],
        "segment_id": None,
    }


def port(row: Row, caller: Caller, service: NetworkService) -> dict[str, Any]:
    out = {
        **_standard(row),
        "network_id": row["network_id"],
        "mac_address": row["mac_address"],
        "admin_state_up": row["admin_state_up"],
        "status": row["status"],
        "device_id": row["device_id"],
        "device_owner": row["device_owner"],
        "fixed_ips": row["fixed_ips"],
        "security_groups": row["security_groups"],
        "port_security_enabled": row["port_security_enabled"],
        "allowed_address_pairs": row["allowed_address_pairs"],
        "extra_dhcp_opts": [],
        "binding:vnic_type": row["binding_vnic_type"],
        "dns_name": "",
        "dns_assignment": [],
        "qos_policy_id": qos.policy_of(service, row["id"]),
        "qos_network_policy_id": qos.policy_of(service, row["network_id"]),
    }
    if caller.is_admin:
        out["resource_request"] = qos.resource_request(service, row)
        bound = bool(row["binding_host_id"])
        out.update({"binding:host_id": row["binding_host_id"],
                    "binding:profile": row["binding_profile"],
                    "binding:vif_type": "bridge" if bound else "unbound",
                    "binding:vif_details": {}})  # fmt: skip
    return out


def rule(row: Row, default_group: str | None = None) -> dict[str, Any]:
    out = {
        **_standard(row),
        "security_group_id": row["security_group_id"],
        "direction": row["direction"],
        "ethertype": row["ethertype"],
        "protocol": row["protocol"],
        "port_range_min": row["port_range_min"],
        "port_range_max": row["port_range_max"],
        "remote_ip_prefix": row["remote_ip_prefix"],
        "remote_group_id": row["remote_group_id"],
        "remote_address_group_id": None,
        "normalized_cidr": row["remote_ip_prefix"],
        "belongs_to_default_sg": row["security_group_id"] == default_group,
    }
    del out["name"], out["tags"]
    return out


def security_group(row: Row, service: NetworkService) -> dict[str, Any]:
    default = service.store.default_security_group(row["project_id"])
    rules = [rule(r, default) for r in service.rules_of(row["id"])]
    return {**_standard(row), "security_group_rules": rules, "stateful": row["stateful"],
            "shared": False}  # fmt: skip


def floating_ip(row: Row) -> dict[str, Any]:
    out = {
        **_standard(row),
        "floating_network_id": row["floating_network_id"],
        "floating_ip_address": row["floating_ip_address"],
        "fixed_ip_address": row["fixed_ip_address"],
        "port_id": row["port_id"],
        "router_id": None,
        "status": row["status"],
        "port_details": None,
        "dns_domain": "",
        "dns_name": "",
        "qos_policy_id": None,
    }
    del out["name"]
    return out


def qos_policy(row: Row, service: NetworkService) -> dict[str, Any]:
    rules = [qos_rule(r) for r in qos.rules_of(service, row["id"])]
    return {**_standard(row), "shared": row["shared"], "is_default": row["is_default"],
            "rules": rules}  # fmt: skip


def qos_rule(row: Row) -> dict[str, Any]:
    amount = qos.RULE_TYPES[row["type"]]
    return {"id": row["id"], "qos_policy_id": row["qos_policy_id"], "type": row["type"],
            "direction": row["direction"], amount: row[amount]}  # fmt: skip


def router(row: Row, caller: Caller, service: NetworkService) -> dict[str, Any]:
    gateway: dict[str, Any] | None = None
    if row["gw_network_id"]:
        port = service.store.get("ports", row["gw_port_id"]) if row["gw_port_id"] else None
        fixed = [{"subnet_id": f["subnet_id"], "ip_address": f["ip_address"]}
                 for f in (port["fixed_ips"] if port else [])]  # fmt: skip
        gateway = {"network_id": row["gw_network_id"], "enable_snat": row["enable_snat"],
                   "external_fixed_ips": fixed}  # fmt: skip
    return {
        **_standard(row),
        "admin_state_up": row["admin_state_up"],
        "status": row["status"],
        "external_gateway_info": gateway,
        "routes": [],
    }
