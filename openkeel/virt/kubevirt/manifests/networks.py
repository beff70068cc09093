"""Ports -> KubeVirt interfaces/networks, Nova's network_data.json and cloud-init netplan v2.

Called by ``vm.build_server`` and ``cloudinit``. Every port is a bridge-bound interface on the
Multus NetworkAttachmentDefinition of its network, with the port's MAC; addresses reach the
guest through network_data.json (config drive) or netplan v2 (NoCloud).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from openkeel.virt.kubevirt.manifests import naming
from openkeel.virt.kubevirt.manifests.inputs import Subnet
from openkeel.virt.kubevirt.manifests.settings import JsonObj, KubevirtSettings
from openkeel.virt.model import NetworkInterface

# VIF types network_data.json names as such; others are reported as "phy" (as Nova does).
_EXPOSED_VIF_TYPES = ("bridge", "dvs", "hw_veb", "hyperv", "ovs", "tap", "vhostuser", "vif")


@dataclass(frozen=True)
class Nics:
    interfaces: list[JsonObj]
    networks: list[JsonObj]


def build_nics(
    ports: tuple[NetworkInterface, ...],
    vif_model: str | None,
    settings: KubevirtSettings,
    namespace: str,
) -> Nics:
    """``dom.devices.interfaces`` and ``tmpl.networks`` for the server's ports."""
    interfaces, networks = [], []
    nad_namespace = settings.network_namespace or namespace
    for port in ports:
        name = naming.interface_name(port.port_id)
        binding: JsonObj = {"sriov": {}} if port.vnic_type == "direct" else {"bridge": {}}
        interface: JsonObj = {"name": name, **binding, "macAddress": port.mac_address}
        if port.vnic_type != "direct":
            interface["model"] = vif_model or "virtio"
        if port.tag:
            interface["tag"] = port.tag
        interfaces.append(interface)
        nad = naming.network_attachment_name(port.network_id)
        networks.append({"name": name, "multus": {"networkName": f"{nad_namespace}/{nad}"}})
    return Nics(interfaces, networks)


@dataclass(frozen=True)
class _Address:
    ip: ipaddress.IPv4Interface | ipaddress.IPv6Interface
    subnet: Subnet


def _addresses(port: NetworkInterface, subnets: tuple[Subnet, ...]) -> list[_Address]:
    found = []
    for text in port.fixed_ips:
        ip = ipaddress.ip_address(text)
        for subnet in subnets:
            net = ipaddress.ip_network(subnet.cidr, strict=False)
            if ip in net:
                found.append(_Address(ipaddress.ip_interface(f"{ip}/{net.prefixlen}"), subnet))
                break
    return found


def _first(addresses: list[_Address], version: int) -> _Address | None:
    return next((a for a in addresses if a.ip.version == version), None)


def _routes(addr: _Address) -> list[JsonObj]:
    routes = []
    if addr.subnet.gateway:
        anywhere = "0.0.0.0" if addr.ip.version == 4 else "::"
        routes.append({"network": anywhere, "netmask": anywhere, "gateway": addr.subnet.gateway})
    for route in addr.subnet.routes:
        net = ipaddress.ip_network(route.destination, strict=False)
        routes.append(
            {
                "network": str(net.network_address),
                "netmask": str(net.netmask),
                "gateway": route.gateway,
            }
        )
    return routes


def _network_entry(port: NetworkInterface, addr: _Address, number: int, link: str) -> JsonObj:
    version = addr.ip.version
    entry: JsonObj = {"id": f"network{number}", "link": link, "network_id": port.network_id}
    if addr.subnet.dhcp:
        entry["type"] = f"ipv{version}_dhcp"
        return entry
    entry["type"] = f"ipv{version}"
    entry["ip_address"] = str(addr.ip.ip)
    entry["netmask"] = str(addr.ip.netmask)
    entry["routes"] = _routes(addr)
    return entry


def link_id(port: NetworkInterface) -> str:
    """The device name Neutron/Nova give a port (``tap`` + 11 characters of its id)."""
    return f"tap{port.port_id[:11]}"


def network_data(
    ports: tuple[NetworkInterface, ...], subnets: dict[str, tuple[Subnet, ...]]
) -> JsonObj:
    """Nova's network_data.json (links, networks, services) for the ports."""
    links: list[JsonObj] = []
    networks: list[JsonObj] = []
    services: list[JsonObj] = []
    for port in ports:
        addresses = _addresses(port, subnets.get(port.network_id, ()))
        if not addresses:
            continue
        dhcp = any(a.subnet.dhcp for a in addresses)
        links.append(
            {
                "id": link_id(port),
                "vif_id": port.port_id,
                "type": port.vif_type if port.vif_type in _EXPOSED_VIF_TYPES else "phy",
                "mtu": None if dhcp else port.mtu,
                "ethernet_mac_address": port.mac_address,
            }
        )
        for version in (4, 6):
            addr = _first(addresses, version)
            if addr is None:
                continue
            networks.append(_network_entry(port, addr, len(networks), link_id(port)))
            for dns in addr.subnet.dns_nameservers:
                service = {"type": "dns", "address": dns}
                if service not in services:
                    services.append(service)
    return {"links": links, "networks": networks, "services": services}


def _ethernet(port: NetworkInterface, addresses: list[_Address]) -> JsonObj:
    eth: JsonObj = {"match": {"macaddress": port.mac_address}}
    static = [a for a in addresses if not a.subnet.dhcp]
    eth["dhcp4"] = any(a.subnet.dhcp and a.ip.version == 4 for a in addresses)
    if any(a.subnet.dhcp and a.ip.version == 6 for a in addresses):
        eth["dhcp6"] = True
    if static:
        eth["addresses"] = [str(a.ip) for a in static]
        routes = [
            {
                "to": "default" if r["netmask"] in ("0.0.0.0", "::") else _cidr(r),
                "via": r["gateway"],
            }
            for a in static
            for r in _routes(a)
        ]
        if routes:
            eth["routes"] = routes
        dns = [d for a in static for d in a.subnet.dns_nameservers]
        if dns:
            eth["nameservers"] = {"addresses": list(dict.fromkeys(dns))}
    if port.mtu and not any(a.subnet.dhcp for a in addresses):
        eth["mtu"] = port.mtu
    return eth


def _cidr(route: JsonObj) -> str:
    return str(ipaddress.ip_network(f"{route['network']}/{route['netmask']}", strict=False))


def netplan_v2(
    ports: tuple[NetworkInterface, ...], subnets: dict[str, tuple[Subnet, ...]]
) -> JsonObj:
    """cloud-init network config version 2 (NoCloud cannot read network_data.json)."""
    ethernets: JsonObj = {}
    for index, port in enumerate(ports):
        addresses = _addresses(port, subnets.get(port.network_id, ()))
        if addresses:
            ethernets[f"nic{index}"] = _ethernet(port, addresses)
    return {"version": 2, "ethernets": ethernets}
