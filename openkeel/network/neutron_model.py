"""Nova's network model (network_info) from Neutron's documents: pure, no I/O.

Called by the Neutron adapter with the instance's ports and the networks, subnets and floating
IPs they refer to (fetched in one list call each).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

Doc = Mapping[str, Any]
# A VIF type Neutron reports when no mechanism driver bound the port.
UNBOUND_TYPES = ("unbound", "binding_failed")
_TUNNELS = ("vxlan", "gre", "geneve")


def vif(
    port: Doc,
    network: Doc | None,
    subnets: Mapping[str, Doc],
    floating: Mapping[str, str],
    *,
    created: bool,
    ovs_bridge: str,
) -> dict[str, Any]:
    """One VIF of network_info for ``port`` (``floating``: fixed address -> floating address;
    ``created``: the port is compute's, deleted with the server)."""
    vif_type = port.get("binding:vif_type") or "unbound"
    details = dict(port.get("binding:vif_details") or {})
    by_subnet: dict[str, list[str]] = {}
    for fixed in port.get("fixed_ips") or ():
        by_subnet.setdefault(str(fixed["subnet_id"]), []).append(str(fixed["ip_address"]))
    nets = [
        _subnet(subnets[subnet_id], addresses, floating)
        for subnet_id, addresses in by_subnet.items()
        if subnet_id in subnets
    ]
    bridge = details.get("bridge_name") or (ovs_bridge if vif_type == "ovs" else None)
    return {
        "id": port["id"],
        "address": port.get("mac_address"),
        "network": {
            "id": port["network_id"],
            "bridge": bridge,
            "label": (network or {}).get("name", ""),
            "subnets": nets,
            "meta": {
                "injected": False,
                "tenant_id": port.get("project_id") or port.get("tenant_id"),
                "mtu": (network or {}).get("mtu"),
                "physical_network": (network or {}).get("provider:physical_network"),
                "tunneled": (network or {}).get("provider:network_type") in _TUNNELS,
            },
        },
        "type": vif_type,
        "details": details,
        "devname": f"tap{port['id']}"[:14],
        "ovs_interfaceid": port["id"] if vif_type == "ovs" else None,
        "qbh_params": None,
        "qbg_params": None,
        "active": port.get("status") == "ACTIVE",
        "vnic_type": port.get("binding:vnic_type", "normal"),
        "profile": port.get("binding:profile") or {},
        "preserve_on_delete": not created,
        "delegate_create": False,
        "meta": {},
    }


def _subnet(subnet: Doc, addresses: list[str], floating: Mapping[str, str]) -> dict[str, Any]:
    version = int(subnet["ip_version"])
    gateway = subnet.get("gateway_ip")
    return {
        "cidr": subnet["cidr"],
        "dns": [_ip(dns, "dns", version) for dns in subnet.get("dns_nameservers") or ()],
        "gateway": _ip(gateway, "gateway", version) if gateway else {},
        "ips": [
            {
                **_ip(a, "fixed", version),
                "floating_ips": [_ip(floating[a], "floating", 4)] if a in floating else [],
            }
            for a in addresses
        ],
        "routes": [_route(r, version) for r in subnet.get("host_routes") or ()],
        "version": version,
        "meta": {"dhcp_server": gateway} if gateway and subnet.get("enable_dhcp") else {},
    }


def _route(route: Doc, version: int) -> dict[str, Any]:
    gateway = _ip(route["nexthop"], "gateway", version)
    return {"cidr": route["destination"], "gateway": gateway, "interface": None, "meta": {}}


def _ip(address: str, kind: str, version: int) -> dict[str, Any]:
    return {"address": address, "type": kind, "version": version, "meta": {}}
