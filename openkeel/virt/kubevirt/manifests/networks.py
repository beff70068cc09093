"""Ports -> KubeVirt interfaces/networks, Nova's network_data.json and cloud-init netplan v2.

Called by ``vm.build_server``, ``cloudinit`` and the driver's interface hot-plug. Where a port
goes is the operator's ``[kubevirt] network_mappings`` for its network (by id or name), see
:func:`target_of`:

- ``pod``: the pod network, ``masquerade`` binding (at most one port); the cluster gives the
  address (the pod's IP), which the guest takes by DHCP and the port follows;
- ``dhcp:<namespace>/<nad>``: a Multus NetworkAttachmentDefinition whose IPAM gives the address
  (KubeVirt's bridge binding hands it to the guest by DHCP); the port follows it;
- ``<namespace>/<nad>``, and by default ``<network_namespace or project namespace>/net-<network
  id>``: a Multus NAD without IPAM, ``bridge`` binding (``sriov`` for direct ports); the port's
  own fixed IPs reach the guest through network_data.json (config drive) or netplan v2
  (NoCloud).

Every interface carries the port's MAC.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, replace

from openkeel.virt.errors import PermanentDriverError
from openkeel.virt.kubevirt.manifests import naming
from openkeel.virt.kubevirt.manifests.inputs import Subnet
from openkeel.virt.kubevirt.manifests.settings import JsonObj, KubevirtSettings
from openkeel.virt.model import NetworkInterface

# VIF types network_data.json names as such; others are reported as "phy" (as Nova does).
_EXPOSED_VIF_TYPES = ("bridge", "dvs", "hw_veb", "hyperv", "ovs", "tap", "vhostuser", "vif")


POD = "pod"
DHCP_PREFIX = "dhcp:"


class NetworkMappingError(PermanentDriverError):
    """A port cannot be mapped (a second pod-network port, a direct port on the pod network,
    a malformed ``network_mappings`` entry)."""


@dataclass(frozen=True)
class NetTarget:
    """Where one port goes: the pod network, or a Multus NAD (``namespace/name``)."""

    nad: str | None  # None: the pod network
    cluster_addressed: bool  # the cluster's IPAM gives the address (the port follows it)

    @property
    def pod(self) -> bool:
        return self.nad is None


@dataclass(frozen=True)
class Nics:
    interfaces: list[JsonObj]
    networks: list[JsonObj]
    # Ports whose address the cluster assigns: the guest asks DHCP for it on these.
    cluster_addressed: frozenset[str] = frozenset()


def target_of(port: NetworkInterface, settings: KubevirtSettings, namespace: str) -> NetTarget:
    """The mapping of the port's network (by id, then name), else its default NAD."""
    mapped = settings.network_mappings.get(port.network_id)
    if mapped is None and port.network_name:
        mapped = settings.network_mappings.get(port.network_name)
    if mapped is None:
        nad = naming.network_attachment_name(port.network_id)
        return NetTarget(f"{settings.network_namespace or namespace}/{nad}", False)
    if mapped == POD:
        return NetTarget(None, True)
    dhcp = mapped.startswith(DHCP_PREFIX)
    nad = mapped.removeprefix(DHCP_PREFIX)
    if nad.count("/") != 1 or not all(nad.split("/")):
        raise NetworkMappingError(
            f"[kubevirt] network_mappings: {mapped!r} is neither 'pod', "
            "'<namespace>/<nad>' nor 'dhcp:<namespace>/<nad>'"
        )
    return NetTarget(nad, dhcp)


def build_nic(
    port: NetworkInterface, target: NetTarget, vif_model: str | None
) -> tuple[JsonObj, JsonObj]:
    """The ``interfaces`` and ``networks`` entries of one port (also used to hot-plug it)."""
    name = naming.interface_name(port.port_id)
    direct = port.vnic_type == "direct"
    if target.pod and direct:
        raise NetworkMappingError(
            f"Port {port.port_id} is a direct (SR-IOV) port; the pod network cannot carry it"
        )
    binding: JsonObj = {"masquerade": {}} if target.pod else {"sriov": {}} if direct else {"bridge": {}}  # fmt: skip
    interface: JsonObj = {"name": name, **binding, "macAddress": port.mac_address}
    if not direct:
        interface["model"] = vif_model or "virtio"
    if port.tag:
        interface["tag"] = port.tag
    network: JsonObj = {"name": name}
    network.update({"pod": {}} if target.pod else {"multus": {"networkName": target.nad}})
    return interface, network


def build_nics(
    ports: tuple[NetworkInterface, ...],
    vif_model: str | None,
    settings: KubevirtSettings,
    namespace: str,
) -> Nics:
    """``dom.devices.interfaces`` and ``tmpl.networks`` for the server's ports.

    Raises NetworkMappingError for a port that cannot be placed (KubeVirt allows one
    interface on the pod network)."""
    interfaces, networks, cluster = [], [], set()
    on_pod = None
    for port in ports:
        target = target_of(port, settings, namespace)
        if target.pod:
            if on_pod is not None:
                raise NetworkMappingError(
                    f"Ports {on_pod} and {port.port_id} are both on the pod network; "
                    "a KubeVirt VM has at most one pod network interface"
                )
            on_pod = port.port_id
        interface, network = build_nic(port, target, vif_model)
        interfaces.append(interface)
        networks.append(network)
        if target.cluster_addressed:
            cluster.add(port.port_id)
    return Nics(interfaces, networks, frozenset(cluster))


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


def _dhcp_only(port: NetworkInterface, subnets: tuple[Subnet, ...]) -> list[_Address]:
    """A cluster-addressed port: whatever its subnets say, the guest asks DHCP (KubeVirt's
    masquerade or bridge binding serves the cluster's address); one entry per IP version."""
    seen: dict[int, _Address] = {}
    for addr in _addresses(port, subnets):
        seen.setdefault(addr.ip.version, _Address(addr.ip, replace(addr.subnet, dhcp=True)))
    if not seen:
        seen[4] = _Address(ipaddress.ip_interface("0.0.0.0/0"), Subnet(cidr="0.0.0.0/0", dhcp=True))
    return list(seen.values())


def _port_addresses(
    port: NetworkInterface, subnets: dict[str, tuple[Subnet, ...]], cluster: frozenset[str]
) -> list[_Address]:
    known = subnets.get(port.network_id, ())
    return _dhcp_only(port, known) if port.port_id in cluster else _addresses(port, known)


def network_data(
    ports: tuple[NetworkInterface, ...],
    subnets: dict[str, tuple[Subnet, ...]],
    cluster_addressed: frozenset[str] = frozenset(),
) -> JsonObj:
    """Nova's network_data.json (links, networks, services) for the ports."""
    links: list[JsonObj] = []
    networks: list[JsonObj] = []
    services: list[JsonObj] = []
    for port in ports:
        addresses = _port_addresses(port, subnets, cluster_addressed)
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
    ports: tuple[NetworkInterface, ...],
    subnets: dict[str, tuple[Subnet, ...]],
    cluster_addressed: frozenset[str] = frozenset(),
) -> JsonObj:
    """cloud-init network config version 2 (NoCloud cannot read network_data.json)."""
    ethernets: JsonObj = {}
    for index, port in enumerate(ports):
        addresses = _port_addresses(port, subnets, cluster_addressed)
        if addresses:
            ethernets[f"nic{index}"] = _ethernet(port, addresses)
    return {"version": 2, "ethernets": ethernets}
