"""network_data.json (links, networks, services) and the EC2 addresses from a server's network
info (Nova's network model as the info cache keeps it)."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping
from typing import Any

# VIF types network_data.json names as such; any other is a "phy" link (as Nova reports it).
EXPOSED_VIF_TYPES = frozenset(
    {"bridge", "dvs", "hw_veb", "hyperv", "ovs", "tap", "vhostuser", "vif"}
)

Vif = Mapping[str, Any]


def _subnets(vif: Vif) -> list[Mapping[str, Any]]:
    return list((vif.get("network") or {}).get("subnets") or ())


def _version(subnet: Mapping[str, Any]) -> int:
    if subnet.get("version"):
        return int(subnet["version"])
    return ipaddress.ip_network(subnet["cidr"], strict=False).version


def _first(subnets: list[Mapping[str, Any]], version: int) -> Mapping[str, Any] | None:
    return next((s for s in subnets if _version(s) == version), None)


def _meta(subnet: Mapping[str, Any]) -> Mapping[str, Any]:
    return subnet.get("meta") or {}


def _link(vif: Vif, number: int) -> dict[str, Any]:
    subnets = _subnets(vif)
    dhcp = any(_meta(s).get("dhcp_server") for s in subnets)
    vif_type = vif.get("type")
    return {
        "id": vif.get("devname") or f"interface{number}",
        "vif_id": vif["id"],
        "type": vif_type if vif_type in EXPOSED_VIF_TYPES else "phy",
        # A DHCP server tells the guest its MTU itself.
        "mtu": None if dhcp else ((vif.get("network") or {}).get("meta") or {}).get("mtu"),
        "ethernet_mac_address": vif.get("address"),
    }


def _dns(subnet: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [{"type": "dns", "address": ip.get("address")} for ip in subnet.get("dns") or ()]


def _routes(subnet: Mapping[str, Any], version: int) -> list[dict[str, Any]]:
    routes = []
    gateway = (subnet.get("gateway") or {}).get("address")
    if gateway:
        anywhere = "0.0.0.0" if version == 4 else "::"
        routes.append({"network": anywhere, "netmask": anywhere, "gateway": gateway})
    for route in subnet.get("routes") or ():
        net = ipaddress.ip_network(route["cidr"], strict=False)
        routes.append({"network": str(net.network_address), "netmask": str(net.netmask),
                       "gateway": (route.get("gateway") or {}).get("address")})  # fmt: skip
    return routes


def _network(vif: Vif, subnet: Mapping[str, Any], version: int, number: int, link: str) -> dict[str, Any]:  # fmt: skip
    network_id = (vif.get("network") or {}).get("id")
    meta = _meta(subnet)
    mode = meta.get("ipv6_address_mode")
    if mode is None and (meta.get("dhcp_server") is not None or meta.get("enable_dhcp")):
        return {"id": f"network{number}", "type": f"ipv{version}_dhcp", "link": link,
                "network_id": network_id}  # fmt: skip
    net = ipaddress.ip_network(subnet["cidr"], strict=False)
    return {
        "id": f"network{number}",
        "type": f"ipv{version}" + (f"_{mode}" if mode is not None else ""),
        "link": link,
        "ip_address": subnet["ips"][0]["address"],
        "netmask": str(net.netmask),
        "routes": _routes(subnet, version),
        "network_id": network_id,
        "services": _dns(subnet),
    }


def network_data(network_info: Iterable[Vif]) -> dict[str, Any] | None:
    """Nova's network_data.json; None without network info (the service then answers ``{}``)."""
    vifs = list(network_info)
    if not vifs:
        return None
    links: list[dict[str, Any]] = []
    networks: list[dict[str, Any]] = []
    services: list[dict[str, Any]] = []
    interface = -1
    for vif in vifs:
        subnets = _subnets(vif)
        if not subnets:
            continue
        interface += 1
        by_version = [(v, _first(subnets, v)) for v in (4, 6)]
        if not any(s for _, s in by_version):
            continue
        link = _link(vif, interface)
        links.append(link)
        for version, subnet in by_version:
            if subnet is None or not subnet.get("ips"):
                continue
            networks.append(_network(vif, subnet, version, len(networks), link["id"]))
            services += [dns for dns in _dns(subnet) if dns not in services]
    return {"links": links, "networks": networks, "services": services}


def fixed_ipv4s(network_info: Iterable[Vif]) -> list[str]:
    """The server's fixed IPv4 addresses, in port order."""
    return [ip["address"] for vif in network_info for subnet in _subnets(vif)
            for ip in subnet.get("ips") or () if ipaddress.ip_address(ip["address"]).version == 4]  # fmt: skip


def floating_ips(network_info: Iterable[Vif]) -> list[str]:
    """The floating addresses of the server's fixed ones."""
    return [f["address"] for vif in network_info for subnet in _subnets(vif)
            for ip in subnet.get("ips") or () for f in ip.get("floating_ips") or ()]  # fmt: skip


def all_fixed_ips(network_info: Iterable[Vif]) -> set[str]:
    """Every fixed address (both versions): what the metadata service matches a requester by."""
    return {ip["address"] for vif in network_info for subnet in _subnets(vif)
            for ip in subnet.get("ips") or ()}  # fmt: skip


def _trusted(vif: Vif) -> bool:
    return str((vif.get("profile") or {}).get("trusted", "false")).lower() in (
        "true",
        "1",
        "yes",
        "on",
    )


def tagged_nics(
    network_info: Iterable[Vif], with_vlan: bool, with_trust: bool
) -> list[dict[str, Any]]:
    """meta_data.json ``devices`` entries of the ports Nova exposes (a device tag, a VLAN or a
    trusted VF); the guest's bus address is not known here, so ``bus`` and ``address`` are
    ``none``, as Nova writes them for a device without a bus."""
    devices = []
    for vif in network_info:
        vlan = (vif.get("details") or {}).get("vlan")
        if not (vif.get("tag") or vlan or _trusted(vif)):
            continue
        device: dict[str, Any] = {}
        if with_vlan and vlan:
            device["vlan"] = int(vlan)
        if with_trust:
            device["vf_trusted"] = _trusted(vif)
        device.update({"type": "nic", "mac": vif.get("address"), "bus": "none", "address": "none"})
        if vif.get("tag"):
            device["tags"] = [vif["tag"]]
        devices.append(device)
    return devices
