"""The embedded network adapter (``[openkeel_network] backend = flat``), on the embedded network
service (:mod:`openkeel.network.embedded`, decision 0041).

A server's VIFs are ports of that service: ``auto`` or nothing gives one port on the shared
``private`` network (``[openkeel_network]`` network_id, network_name, cidr, gateway,
dns_nameservers); a network asked for by id (or label) gives a port on it; a port asked for is
bound to the server. The addresses come from the subnet's pools, one claim per address, so a
server never shares an address with any other port. Ports compute made go with the server; a
port the user gave is only unbound. Data directories from before the service keep their
addresses: the rows of ``openkeel_fixed_ips`` become ports once.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from oslo_config import cfg

from openkeel.db.network_store import NetworkStore
from openkeel.db.schema import api as api_tables
from openkeel.domain.resource_requests import PortRequests, ports_requests
from openkeel.network import errors, port_groups
from openkeel.network.adapter import (
    InstanceNetRef,
    NetworkInfo,
    RequestedNetwork,
    profile_with_allocation,
)
from openkeel.network.embedded import qos
from openkeel.network.embedded.faults import NetworkFault
from openkeel.network.embedded.service import Caller, NetworkService, Row
from openkeel.network.flat_bindings import FlatPortBindings
from openkeel.network.flat_proxies import FlatProxies, nova_group
from openkeel.network.schema import ensure_schema, fixed_ips

_MAPPINGS = api_tables.instance_mappings
COMPUTE_OWNER = "compute:nova"
# The project owning the networks a compute process makes when it finds none (the all-in-one
# bootstraps them first, owned by its admin project).
DEFAULT_OWNER = "admin"


class FlatNetwork(FlatProxies, FlatPortBindings):
    """Ports of the embedded network service for instances (and the proxies' side: flat_proxies)."""

    name = "flat"

    def __init__(self, conf: cfg.ConfigOpts, api_db: sa.Engine) -> None:
        opts = conf.openkeel_network
        self.network_id: str = opts.network_id
        self.label: str = opts.network_name
        self.bridge: str = opts.bridge
        self.default_pool: str = opts.default_floating_pool
        self.store = NetworkStore(api_db)
        self.store.install()
        self.service = NetworkService(self.store)
        self.service.ensure_network(DEFAULT_OWNER, {
            "id": opts.network_id, "name": opts.network_name, "cidr": opts.cidr,
            "gateway": opts.gateway, "dns_nameservers": list(opts.dns_nameservers),
        })  # fmt: skip
        self.db = api_db
        self._adopt_old_addresses()

    # --- validation ------------------------------------------------------------------------

    def _network(self, ident: str, project_id: str | None) -> Row:
        """A network the project may boot on, by id or label."""
        row = self.store.get("networks", ident)
        if row is None:
            row = next(iter(self.store.list("networks", name=ident)), None)
        if row is None or row["external"]:
            raise errors.NetworkNotFound(ident)
        if project_id is not None and not (row["shared"] or row["project_id"] == project_id):
            raise errors.NetworkNotFound(ident)
        return row

    def _wanted(
        self, requested: Sequence[RequestedNetwork], project_id: str | None
    ) -> list[tuple[RequestedNetwork, Row | None]]:
        """The requests that need a VIF, with their network (None: a given port)."""
        if any(item.is_none for item in requested):
            return []
        if not requested or any(item.is_auto for item in requested):
            return [
                (RequestedNetwork(network_id=self.network_id), self._network(self.network_id, None))
            ]
        out: list[tuple[RequestedNetwork, Row | None]] = []
        for item in requested:
            if item.port_id:
                out.append((item, None))
            else:
                out.append((item, self._network(str(item.network_id), project_id)))
        return out

    def _port(self, port_id: str, project_id: str | None) -> Row:
        port = self.store.get("ports", port_id)
        if port is None or (project_id is not None and port["project_id"] != project_id):
            raise errors.PortNotFound(port_id)
        return port

    def _check_address(self, network: Row, address: str) -> str:
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            raise errors.InvalidFixedIp(address) from None
        for subnet in self.store.list("subnets", network_id=network["id"]):
            if ip in ipaddress.ip_network(subnet["cidr"]) and str(ip) != subnet["gateway_ip"]:
                return str(ip)
        raise errors.FixedIpNotInNetwork(address, network["id"])

    def validate_networks(
        self, requested: Sequence[RequestedNetwork], max_count: int, project_id: str | None = None
    ) -> int:
        for item, network in self._wanted(requested, project_id):
            if network is None:
                port = self._port(str(item.port_id), project_id)
                if port["device_id"]:
                    raise errors.PortInUse(port["id"])
                if max_count > 1:
                    raise errors.MultiplePortsNotApplicable()
                continue
            if item.address is None:
                continue
            address = self._check_address(network, item.address)
            if max_count > 1:
                raise errors.InvalidFixedIpAndMaxCountRequest(
                    "max_count cannot be greater than 1 if an fixed_ip is specified."
                )
            holder = self._holder(network["id"], address, project_id)
            if holder is not None:
                raise errors.FixedIpAlreadyInUse(address, holder or None)
        return max_count

    def _holder(self, network_id: str, address: str, project_id: str | None) -> str | None:
        """The server holding the address, as far as the caller may see: Neutron lists a
        non-admin (``project_id``) only its own ports, so another project's holder is not seen
        here (the boot then fails at allocation, naming nobody). "" for an unbound port."""
        if address not in self.store.allocated(network_id):
            return None
        for port in self.store.list("ports", network_id=network_id):
            if any(f["ip_address"] == address for f in port["fixed_ips"]):
                if project_id is not None and port["project_id"] != project_id:
                    return None
                return str(port["device_id"])
        return None

    def find_security_group(self, project_id: str, name_or_id: str) -> str:
        """The project's group by id or unique name (Nova's lookup through Neutron)."""
        if name_or_id == "default":
            return self.service.default_security_group(project_id)
        row = self.store.get("security_groups", name_or_id)
        if row is not None and row["project_id"] == project_id:
            return str(row["id"])
        named = self.store.list("security_groups", project_id=project_id, name=name_or_id)
        if len(named) > 1:
            raise errors.SecurityGroupNotUnique(name_or_id)
        if not named:
            raise errors.SecurityGroupNotFound(name_or_id)
        return str(named[0]["id"])

    # --- networks ---------------------------------------------------------------------------

    def _visible(self, row: Row, project_id: str | None) -> bool:
        return (
            project_id is None
            or row["shared"]
            or row["external"]
            or row["project_id"] == project_id
        )

    def list_networks(self, project_id: str | None) -> list[dict[str, Any]]:
        rows = self.store.list("networks")
        return [{"id": r["id"], "name": r["name"]} for r in rows if self._visible(r, project_id)]

    def get_network(self, project_id: str | None, network_id: str) -> dict[str, Any]:
        row = self.store.get("networks", network_id)
        if row is None or not self._visible(row, project_id):
            raise errors.NetworkNotFound(network_id)
        return {"id": row["id"], "name": row["name"]}

    # --- a server's interfaces ------------------------------------------------------------------

    def instance_ports(self, instance_uuid: str) -> list[dict[str, Any]]:
        return [
            {**_port_doc(p), "resource_request": qos.resource_request(self.service, p)}
            for p in self.store.list("ports", device_id=instance_uuid)
        ]

    def show_port(self, port_id: str) -> dict[str, Any]:
        port = self.store.get("ports", port_id)
        if port is None:
            raise errors.PortNotFound(port_id)
        return _port_doc(port)

    def attach_port(self, instance: InstanceNetRef, requested: RequestedNetwork) -> dict[str, Any]:
        admin = Caller(instance.project_id, True)
        if requested.port_id:
            self._bind(admin, instance, requested.port_id, requested.tag)
            port_id = requested.port_id
        else:
            if requested.network_id:
                network = self._network(requested.network_id, instance.project_id)
            else:
                network = self._only_network(instance.project_id)
            port_id = self._create(admin, instance, network, requested)["id"]
        port = self.store.get("ports", port_id)
        assert port is not None
        return self._vif(port, instance)

    def _only_network(self, project_id: str) -> Row:
        """The network an attach without one goes to: the project's own, else the shared ones
        (Nova's choice when nothing is asked; several: ambiguous)."""
        usable = [n for n in self.store.list("networks")
                  if not n["external"] and (n["project_id"] == project_id or n["shared"])]  # fmt: skip
        own = [n for n in usable if n["project_id"] == project_id]
        choice = own or usable
        if not choice:
            raise errors.InterfaceAttachFailedNoNetwork(project_id)
        if len(choice) > 1:
            raise errors.NetworkAmbiguous()
        return choice[0]

    def release_port(self, instance: InstanceNetRef, port_id: str) -> None:
        port = self.store.get("ports", port_id)
        if port is None or port["device_id"] != instance.uuid:
            return
        if port["created_by_compute"]:
            self.service.delete_port(Caller(None, True), port_id)
        else:
            self._unbind(port_id)

    def set_port_addresses(self, port_id: str, addresses: Sequence[str]) -> None:
        wanted = [{"ip_address": address} for address in addresses]
        try:
            self.service.update_port(Caller(None, True), port_id, {"fixed_ips": wanted})
        except NetworkFault as exc:
            if exc.status == 404:
                raise errors.PortNotFound(port_id) from exc
            raise errors.NetworkError(f"Port {port_id} cannot take {', '.join(addresses)}: {exc.message}") from exc  # fmt: skip

    def _unbind(self, port_id: str) -> None:
        self.store.update("ports", port_id, {
            "device_id": "", "device_owner": "", "status": "DOWN", "binding_host_id": "",
            "device_tag": None, "binding_profile": {},
        })  # fmt: skip

    # --- a server's security groups -----------------------------------------------------------

    def instance_security_groups(self, instance_uuid: str) -> list[dict[str, Any]]:
        out = []
        for port in self.store.list("ports", device_id=instance_uuid):
            for group_id in port["security_groups"]:
                group = self.store.get("security_groups", group_id)
                if group is not None:
                    out.append(nova_group(self.service, group))
        return out

    def port_security_groups(self, instance_uuid: str) -> dict[str, Any]:
        def groups(ids: list[str]) -> dict[str, Any]:
            rows = (self.store.get("security_groups", g) for g in ids)
            return {r["id"]: {**r, "security_group_rules": self.service.rules_of(r["id"])}
                    for r in rows if r is not None}  # fmt: skip

        return port_groups.port_security(self.store.list("ports", device_id=instance_uuid), groups)

    def security_group_members(self, group_id: str) -> list[str]:
        return port_groups.members(self.store.list("ports"), group_id)

    def add_security_group(self, instance_uuid: str, project_id: str, name: str) -> None:
        ports = self.store.list("ports", device_id=instance_uuid)
        group_id = port_groups.server_group(self.find_security_group, ports, instance_uuid, project_id, name)  # fmt: skip
        for port_id, groups in port_groups.adding(ports, group_id):
            self.store.update("ports", port_id, {"security_groups": groups})

    def remove_security_group(self, instance_uuid: str, project_id: str, name: str) -> None:
        ports = self.store.list("ports", device_id=instance_uuid)
        group_id = port_groups.server_group(self.find_security_group, ports, instance_uuid, project_id, name)  # fmt: skip
        for port_id, groups in port_groups.removing(ports, group_id, instance_uuid, name):
            self.store.update("ports", port_id, {"security_groups": groups})

    # --- allocation ------------------------------------------------------------------------

    def allocate_for_instance(
        self, instance: InstanceNetRef, requested: Sequence[RequestedNetwork]
    ) -> NetworkInfo:
        existing = self.get_instance_nw_info(instance)
        if existing:
            return existing
        admin = Caller(instance.project_id, True)
        made: list[str] = []
        try:
            for item, network in self._wanted(requested, None):
                if network is None:
                    self._bind(admin, instance, str(item.port_id), item.tag)
                else:
                    made.append(self._create(admin, instance, network, item)["id"])
        except BaseException:
            for port_id in made:
                self.service.delete_port(admin, port_id)
            raise
        return self.get_instance_nw_info(instance)

    def _create(
        self, admin: Caller, instance: InstanceNetRef, network: Row, item: RequestedNetwork
    ) -> Row:
        ref: dict[str, Any] = {
            "network_id": network["id"], "project_id": instance.project_id,
            "device_id": instance.uuid, "device_owner": COMPUTE_OWNER,
            "binding:host_id": instance.host or "",
        }  # fmt: skip
        if item.address is not None:
            ref["fixed_ips"] = [{"ip_address": self._check_address(network, item.address)}]
        if instance.security_groups:
            ref["security_groups"] = list(dict.fromkeys(
                self.find_security_group(instance.project_id, name)
                for name in instance.security_groups
            ))  # fmt: skip
        try:
            return self.service.create_port(
                admin, ref, {"created_by_compute": True, "device_tag": item.tag, "status": "ACTIVE"}
            )
        except NetworkFault as fault:
            if fault.kind == "IpAddressInUse":
                # Nova's words when Neutron refuses the address: the holder is not named (the
                # fault is shown to the booting project, which may not own it).
                raise errors.FixedIpAlreadyInUse(str(item.address)) from fault
            if fault.kind == "IpAddressGenerationFailure":
                raise errors.NoMoreFixedIps(network["id"]) from fault
            raise

    def _bind(self, admin: Caller, instance: InstanceNetRef, port_id: str, tag: str | None) -> None:
        port = self._port(port_id, instance.project_id)
        if port["device_id"] and port["device_id"] != instance.uuid:
            raise errors.PortInUse(port_id)
        self.store.update("ports", port_id, {
            "device_id": instance.uuid, "device_owner": COMPUTE_OWNER, "status": "ACTIVE",
            "binding_host_id": instance.host or "", "device_tag": tag,
            **self._allocation_update(instance, port),
        })  # fmt: skip

    def _allocation_update(self, instance: InstanceNetRef, port: Row) -> dict[str, Any]:
        """The binding profile with the allocation of the port's resource request on the
        instance's host (decision 0076), or nothing to change."""
        profile = profile_with_allocation(
            instance, port["id"], qos.resource_request(self.service, port), port["binding_profile"]
        )
        return {} if profile is None else {"binding_profile": profile}

    def port_resource_requests(self, requested: Sequence[RequestedNetwork]) -> PortRequests:
        ports = [self._port(str(item.port_id), None) for item in requested if item.port_id]
        return ports_requests(
            {"id": p["id"], "resource_request": qos.resource_request(self.service, p)}
            for p in ports
        )

    def bind_to_host(self, instance: InstanceNetRef) -> NetworkInfo:
        for port in self.store.list("ports", device_id=instance.uuid):
            self.store.update("ports", port["id"], {
                "binding_host_id": instance.host or "", **self._allocation_update(instance, port)
            })  # fmt: skip
        return self.get_instance_nw_info(instance)

    def deallocate_for_instance(self, instance: InstanceNetRef) -> None:
        for port in self.store.list("ports", device_id=instance.uuid):
            if port["created_by_compute"]:
                self.service.delete_port(Caller(None, True), port["id"])
            else:  # the user's port outlives the server, unbound
                self._unbind(port["id"])

    def get_instance_nw_info(self, instance: InstanceNetRef) -> NetworkInfo:
        ports = self.store.list("ports", device_id=instance.uuid)
        return [self._vif(port, instance) for port in ports]

    # --- Nova's network model ----------------------------------------------------------------

    def _vif(self, port: Row, instance: InstanceNetRef) -> dict[str, Any]:
        network = self.store.get("networks", port["network_id"]) or {"name": "", "mtu": 1500}
        floating = {f["fixed_ip_address"]: f["floating_ip_address"]
                    for f in self.store.list("floatingips", port_id=port["id"])}  # fmt: skip
        subnets = []
        for subnet_id in dict.fromkeys(f["subnet_id"] for f in port["fixed_ips"]):
            subnet = self.store.get("subnets", subnet_id)
            if subnet is None:
                continue
            ips = [f["ip_address"] for f in port["fixed_ips"] if f["subnet_id"] == subnet_id]
            subnets.append(_subnet(subnet, ips, floating))
        return {
            "id": port["id"],
            "address": port["mac_address"],
            "network": {
                "id": port["network_id"],
                "bridge": self.bridge,
                "label": network["name"],
                "subnets": subnets,
                "meta": {
                    "injected": False,
                    "tenant_id": instance.project_id,
                    "mtu": network["mtu"],
                },
            },
            "type": "bridge",
            "details": {},
            "devname": f"tap{port['id']}"[:14],
            "ovs_interfaceid": None,
            "qbh_params": None,
            "qbg_params": None,
            "active": True,
            "vnic_type": port["binding_vnic_type"],
            "profile": port["binding_profile"],
            "preserve_on_delete": not port["created_by_compute"],
            "delegate_create": False,
            "meta": {},
            "tag": port["device_tag"],
        }

    # --- data directories from before the network service -----------------------------------

    def _adopt_old_addresses(self) -> None:
        """Rows of the old ``openkeel_fixed_ips`` become ports (same id, MAC and address)."""
        if not sa.inspect(self.db).has_table(fixed_ips.name):
            return
        ensure_schema(self.db)
        query = sa.select(fixed_ips, _MAPPINGS.c.project_id).join(
            _MAPPINGS, _MAPPINGS.c.instance_uuid == fixed_ips.c.instance_uuid, isouter=True
        )
        with self.db.connect() as conn:
            rows = list(conn.execute(query))
        subnets = self.store.list("subnets", network_id=self.network_id)
        for row in rows:
            if self.store.get("ports", row.port_id) is None and subnets:
                subnet = next((s for s in subnets
                               if ipaddress.ip_address(row.address) in ipaddress.ip_network(s["cidr"])),
                              subnets[0])  # fmt: skip
                self.store.claim(self.network_id, subnet["id"], row.address, row.port_id)
                self.store.insert("ports", {
                    "id": row.port_id, "name": "", "project_id": row.project_id or DEFAULT_OWNER,
                    "description": "", "network_id": self.network_id,
                    "mac_address": row.mac_address, "status": "ACTIVE",
                    "device_id": row.instance_uuid, "device_owner": COMPUTE_OWNER,
                    "fixed_ips": [{"subnet_id": subnet["id"], "ip_address": row.address}],
                    "created_by_compute": True, "device_tag": row.tag,
                })  # fmt: skip
            with self.db.begin() as conn:
                conn.execute(sa.delete(fixed_ips).where(fixed_ips.c.id == row.id))


def _port_doc(port: Row) -> dict[str, Any]:
    return {"id": port["id"], "network_id": port["network_id"],
            "mac_address": port["mac_address"], "status": port["status"],
            "fixed_ips": port["fixed_ips"], "device_id": port["device_id"],
            "tag": port["device_tag"], "binding:profile": port["binding_profile"]}  # fmt: skip


def _subnet(subnet: Row, addresses: list[str], floating: dict[str, str]) -> dict[str, Any]:
    version = subnet["ip_version"]
    return {
        "cidr": subnet["cidr"],
        "dns": [_ip(dns, "dns", version) for dns in subnet["dns_nameservers"]],
        "gateway": _ip(subnet["gateway_ip"], "gateway", version) if subnet["gateway_ip"] else {},
        "ips": [
            {
                **_ip(a, "fixed", version),
                "floating_ips": [_ip(floating[a], "floating", 4)] if a in floating else [],
            }
            for a in addresses
        ],
        "routes": [],
        "version": version,
        "meta": {"dhcp_server": subnet["gateway_ip"]} if subnet["gateway_ip"] else {},
    }


def _ip(address: str, kind: str, version: int) -> dict[str, Any]:
    return {"address": address, "type": kind, "version": version, "meta": {}}
