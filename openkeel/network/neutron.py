"""The Neutron network adapter (``[openkeel_network] backend = neutron``): a real
neutron-server's ports for instances, with Nova 34.0.0's behaviour (decision 0056).

- The API validates a create request's networks (Nova's ``validate_networks``): unknown or
  invisible network or port, a port in use or without an address, a fixed IP in use or outside
  the network's subnets, a network without subnet, several networks and none asked for; it
  returns how many servers the port quota allows.
- Compute creates a port per requested network (``device_id`` = the server,
  ``device_owner`` = ``compute:<zone>``, ``binding:host_id`` = its host, the server's security
  groups) or binds the user's port; ports compute made are tagged ``openkeel-created`` and go
  with the server, a user's port is unbound. A port no mechanism driver could bind fails the
  build (Nova's PortBindingFailed).
- network_info is built from Neutron (ports, networks, subnets, floating IPs); a VIF whose port
  is not ACTIVE is what compute waits for ``network-vif-plugged`` about
  (``sends_vif_plugged_events``).
- Moves re-bind the ports to the new host (``bind_to_host``); shelve-offload unbinds them. A live
  migration gives them an inactive binding on the destination first, activated once the guest
  moved (Neutron's ``binding-extended``: ``neutron_bindings.NeutronPortBindings``, decision 0072).
- Nova's proxies (security groups and rules, floating IPs and pools) and the fixed/floating IP
  actions: ``neutron_proxies.NeutronProxies``; 2.37 ``auto`` with no network available: Neutron's
  auto-allocated topology (dry run at the API, made in compute) (decision 0064).

Every call is made as the ``[neutron]`` service user (an admin in Neutron); what a non-admin
project may see is filtered here as Neutron would for its token.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from typing import Any

from oslo_config import cfg

from openkeel.domain.resource_requests import PortRequests, ports_requests
from openkeel.network import errors, port_groups
from openkeel.network.adapter import (
    InstanceNetRef,
    NetworkAdapter,
    NetworkInfo,
    RequestedNetwork,
    profile_with_allocation,
)
from openkeel.network.neutron_bindings import NeutronPortBindings
from openkeel.network.neutron_client import Doc, NeutronClient, NeutronFault, load_adapter
from openkeel.network.neutron_model import UNBOUND_TYPES, vif
from openkeel.network.neutron_proxies import NeutronProxies

CREATED_TAG = "openkeel-created"


class NeutronNetwork(NeutronProxies, NeutronPortBindings, NetworkAdapter):
    """Ports of a real neutron-server for instances."""

    name = "neutron"
    sends_vif_plugged_events = True

    def __init__(self, conf: cfg.ConfigOpts, client: NeutronClient | None = None) -> None:
        self.client = client or NeutronClient(load_adapter(conf), conf.neutron.http_retries)
        self.zone = str(conf.default_availability_zone)
        self.ovs_bridge = str(conf.neutron.ovs_bridge)
        self.default_pool = str(conf.neutron.default_floating_pool)

    def close(self) -> None:
        self.client.close()

    # --- lookups as the project sees them ------------------------------------------------

    @staticmethod
    def _visible(network: Doc, project_id: str | None) -> bool:
        return (
            project_id is None
            or bool(network.get("shared"))
            or bool(network.get("router:external"))
            or network.get("project_id") == project_id
        )

    def _available(self, project_id: str | None, auto: bool = False) -> list[Doc]:
        """The networks a boot without a request may use (Nova's _get_available_networks):
        the project's own (for ``auto`` only those up: an auto-allocated topology being built
        is not), then the shared ones; external ones never."""
        own: list[Doc] = []
        if project_id is not None:
            query: dict[str, bool | str] = {"project_id": project_id, "shared": False}
            if auto:
                query["admin_state_up"] = True
            own = self.client.list("networks", query)
        shared = self.client.list("networks", {"shared": True})
        return [n for n in own + shared if not n.get("router:external")]

    def _single_available(self, project_id: str | None, auto: bool, make: bool) -> list[Doc]:
        """What a boot without a network (or with ``auto``) gets: the one available network;
        none available and ``auto``: Neutron's auto-allocated topology, checked with a dry
        run at the API (``project_id`` None: an admin's request, not checked), made (``make``)
        for the server's project in compute (2.37, Nova's _auto_allocate_network)."""
        available = self._available(project_id, auto)
        if len(available) > 1:
            raise errors.NetworkAmbiguous()
        if available or not auto or project_id is None:
            return available
        try:
            topology = self.client.auto_allocated_topology(project_id, dry_run=not make)
        except NeutronFault as fault:  # 409: Neutron's requirements not met; 404: no plugin
            raise errors.UnableToAutoAllocateNetwork(project_id) from fault
        if not make:
            return []
        network = self._show("networks", str(topology["id"]))
        if network is None:
            raise errors.UnableToAutoAllocateNetwork(project_id)
        return [network]

    def _show(self, collection: str, ident: str) -> Doc | None:
        """One resource, or None when Neutron does not have it."""
        try:
            return self.client.show(collection, ident)
        except NeutronFault as fault:
            if fault.status == 404:
                return None
            raise

    def _network(self, ident: str, project_id: str | None) -> Doc:
        network = self._show("networks", ident)
        if network is None or not self._visible(network, project_id):
            raise errors.NetworkNotFound(ident)
        return network

    def _port(self, port_id: str, project_id: str | None) -> Doc:
        port = self._show("ports", port_id)
        if port is None or (project_id is not None and port.get("project_id") != project_id):
            raise errors.PortNotFound(port_id)
        return port

    def _check_address(self, network: Doc, address: str) -> str:
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            raise errors.InvalidFixedIp(address) from None
        for subnet in self.client.list("subnets", {"network_id": network["id"]}):
            if ip in ipaddress.ip_network(subnet["cidr"]):
                return str(ip)
        raise errors.FixedIpNotInNetwork(address, network["id"])

    # --- validation (API) -------------------------------------------------------------------

    def validate_networks(
        self, requested: Sequence[RequestedNetwork], max_count: int, project_id: str | None = None
    ) -> int:
        needed = self._ports_needed(requested, max_count, project_id)
        if not needed or project_id is None:
            return max_count
        limit = int(self.client.quota(project_id).get("port", -1))
        if limit == -1:
            return max_count
        used = len(self.client.list("ports", {"project_id": project_id, "fields": "id"}))
        free = limit - used
        if free < 0:
            raise errors.PortLimitExceeded(
                f"The number of defined ports: {used} is over the limit: {limit}"
            )
        return max_count if free >= needed * max_count else free // needed

    def _ports_needed(
        self, requested: Sequence[RequestedNetwork], max_count: int, project_id: str | None
    ) -> int:
        if any(item.is_none for item in requested):
            return 0
        if not requested or any(item.is_auto for item in requested):
            self._single_available(project_id, any(item.is_auto for item in requested), False)
            return 1
        needed = 0
        for item in requested:
            if item.port_id:
                port = self._port(item.port_id, project_id)
                if port.get("device_id"):
                    raise errors.PortInUse(item.port_id)
                if port.get("ip_allocation") not in ("deferred", "none") and not port.get("fixed_ips"):  # fmt: skip
                    raise errors.PortRequiresFixedIP(item.port_id)
                if max_count > 1:
                    raise errors.MultiplePortsNotApplicable()
                continue
            needed += 1
            network = self._network(str(item.network_id), project_id)
            if not network.get("subnets"):
                raise errors.NetworkRequiresSubnet(network["id"])
            if item.address is not None:
                self._check_fixed_ip(network, item.address, max_count, project_id)
        return needed

    def _check_fixed_ip(
        self, network: Doc, address: str, max_count: int, project_id: str | None
    ) -> None:
        """Nova's checks of a requested address; a holder is looked for among the ports the
        caller may see (another project's is not named: its port create fails instead)."""
        address = self._check_address(network, address)
        if max_count > 1:
            raise errors.InvalidFixedIpAndMaxCountRequest(
                "max_count cannot be greater than 1 if an fixed_ip is specified."
            )
        query = {"network_id": network["id"], "fixed_ips": f"ip_address={address}",
                 "fields": "device_id"}  # fmt: skip
        if project_id is not None:
            query["project_id"] = project_id
        holders = self.client.list("ports", query)
        if holders:
            raise errors.FixedIpAlreadyInUse(address, holders[0].get("device_id") or None)

    # --- security groups and networks (API) ------------------------------------------------

    def find_security_group(self, project_id: str, name_or_id: str) -> str:
        groups = self.client.list("security-groups", {"project_id": project_id, "fields": ["id", "name"]})  # fmt: skip
        by_id = [g for g in groups if g["id"] == name_or_id]
        named = by_id or [g for g in groups if g["name"] == name_or_id]
        if len(named) > 1:
            raise errors.SecurityGroupNotUnique(name_or_id)
        if not named:
            raise errors.SecurityGroupNotFound(name_or_id)
        return str(named[0]["id"])

    def instance_security_groups(self, instance_uuid: str) -> list[dict[str, Any]]:
        ports = self.client.list("ports", {"device_id": instance_uuid})
        ids = sorted({g for p in ports for g in p.get("security_groups") or ()})
        if not ids:
            return []
        groups = {g["id"]: g for g in self.client.list("security-groups", {"id": ids})}
        return [
            port_groups.nova_group(groups[g], groups[g].get("security_group_rules") or ())
            for p in ports
            for g in p.get("security_groups") or ()
            if g in groups
        ]

    def port_security_groups(self, instance_uuid: str) -> dict[str, Any]:
        def groups(ids: list[str]) -> dict[str, Any]:
            return {g["id"]: g for g in self.client.list("security-groups", {"id": ids})}

        ports = self.client.list("ports", {"device_id": instance_uuid})
        return port_groups.port_security(ports, groups)

    def security_group_members(self, group_id: str) -> list[str]:
        # Neutron's port-security-groups-filtering; the result is checked again all the same.
        ports = self.client.list("ports", {"security_groups": [group_id]})
        return port_groups.members(ports, group_id)

    def add_security_group(self, instance_uuid: str, project_id: str, name: str) -> None:
        ports = self.client.list("ports", {"device_id": instance_uuid})
        group_id = port_groups.server_group(self.find_security_group, ports, instance_uuid, project_id, name)  # fmt: skip
        for port_id, groups in port_groups.adding(ports, group_id):
            self.client.update("ports", port_id, {"security_groups": groups})

    def remove_security_group(self, instance_uuid: str, project_id: str, name: str) -> None:
        ports = self.client.list("ports", {"device_id": instance_uuid})
        group_id = port_groups.server_group(self.find_security_group, ports, instance_uuid, project_id, name)  # fmt: skip
        for port_id, groups in port_groups.removing(ports, group_id, instance_uuid, name):
            self.client.update("ports", port_id, {"security_groups": groups})

    def list_networks(self, project_id: str | None) -> list[dict[str, Any]]:
        networks = self.client.list("networks")
        return [{"id": n["id"], "name": n["name"]} for n in networks if self._visible(n, project_id)]  # fmt: skip

    def get_network(self, project_id: str | None, network_id: str) -> dict[str, Any]:
        network = self._network(network_id, project_id)
        return {"id": network["id"], "name": network["name"]}

    # --- a server's interfaces --------------------------------------------------------------

    def instance_ports(self, instance_uuid: str) -> list[dict[str, Any]]:
        ports = self.client.list("ports", {"device_id": instance_uuid})
        return sorted((_port_doc(p) for p in ports), key=lambda p: str(p.get("created_at") or ""))  # fmt: skip

    def show_port(self, port_id: str) -> dict[str, Any]:
        return _port_doc(self._port(port_id, None))

    def attach_port(self, instance: InstanceNetRef, requested: RequestedNetwork) -> dict[str, Any]:
        if requested.port_id:
            port = self._bind(instance, requested.port_id)
        else:
            if requested.network_id:
                network = self._network(requested.network_id, instance.project_id)
            else:
                available = self._available(instance.project_id)
                if not available:
                    raise errors.InterfaceAttachFailedNoNetwork(instance.project_id)
                if len(available) > 1:
                    raise errors.NetworkAmbiguous()
                network = available[0]
            port = self._create(instance, network, requested)
        return self._vifs(instance, [port])[0]

    def release_port(self, instance: InstanceNetRef, port_id: str) -> None:
        port = self._show("ports", port_id)
        if port is not None and port.get("device_id") == instance.uuid:
            self._release(port)

    def _release(self, port: Doc) -> None:
        if CREATED_TAG in (port.get("tags") or ()):
            try:
                self.client.delete("ports", port["id"])
            except NeutronFault as fault:
                if fault.status != 404:
                    raise
        else:  # the user's port outlives the server, unbound (Nova's _unbind_ports)
            self.client.update("ports", port["id"], {
                "device_id": "", "device_owner": "", "binding:host_id": None,
                "binding:profile": {},
            })  # fmt: skip

    def set_port_addresses(self, port_id: str, addresses: Sequence[str]) -> None:
        wanted = [{"ip_address": address} for address in addresses]
        try:
            self.client.update("ports", port_id, {"fixed_ips": wanted})
        except NeutronFault as fault:
            if fault.status == 404:
                raise errors.PortNotFound(port_id) from fault
            raise errors.NetworkError(
                f"Port {port_id} cannot take {', '.join(addresses)}: {fault.message}"
            ) from fault

    # --- allocation (compute) -----------------------------------------------------------------

    def allocate_for_instance(
        self, instance: InstanceNetRef, requested: Sequence[RequestedNetwork]
    ) -> NetworkInfo:
        existing = self.client.list("ports", {"device_id": instance.uuid})
        if existing:
            return self._vifs(instance, existing)
        ports: list[Doc] = []
        try:
            for item, network in self._wanted(instance, requested):
                if network is None:
                    ports.append(self._bind(instance, str(item.port_id)))
                else:
                    ports.append(self._create(instance, network, item))
        except BaseException:
            for port in ports:
                self._release(port)
            raise
        return self._vifs(instance, ports)

    def _wanted(
        self, instance: InstanceNetRef, requested: Sequence[RequestedNetwork]
    ) -> list[tuple[RequestedNetwork, Doc | None]]:
        if any(item.is_none for item in requested):
            return []
        if not requested or any(item.is_auto for item in requested):
            auto = any(item.is_auto for item in requested)
            available = self._single_available(instance.project_id, auto, True)
            return [(RequestedNetwork(network_id=n["id"]), n) for n in available]
        return [
            (item, None if item.port_id else self._network(str(item.network_id), None))
            for item in requested
        ]

    def _binding(self, instance: InstanceNetRef) -> Doc:
        return {"device_id": instance.uuid, "device_owner": f"compute:{self.zone}",
                "binding:host_id": instance.host}  # fmt: skip

    def _create(self, instance: InstanceNetRef, network: Doc, item: RequestedNetwork) -> Doc:
        body: Doc = {"network_id": network["id"], "project_id": instance.project_id,
                     **self._binding(instance)}  # fmt: skip
        if item.address is not None:
            body["fixed_ips"] = [{"ip_address": item.address}]
        groups = self._group_ids(instance)
        if groups is not None:
            body["security_groups"] = groups
        try:
            port = self.client.create("ports", body)
        except NeutronFault as fault:
            raise _port_error(fault, network["id"], item.address) from fault
        try:
            self.client.add_tag("ports", port["id"], CREATED_TAG)
            port["tags"] = [CREATED_TAG]
            _check_bound(port, instance)
        except BaseException:
            self.client.delete("ports", port["id"])
            raise
        return port

    def _group_ids(self, instance: InstanceNetRef) -> list[str] | None:
        """The ids of the server's groups for a new port; None (Neutron applies the project's
        default group) when only ``default`` is asked and the project has none yet."""
        ids: list[str] = []
        for name in dict.fromkeys(instance.security_groups):
            try:
                ids.append(self.find_security_group(instance.project_id, name))
            except errors.SecurityGroupNotFound:
                if name != "default":
                    raise
        return ids or None

    def _bind(self, instance: InstanceNetRef, port_id: str) -> Doc:
        port = self._port(port_id, instance.project_id)
        if port.get("device_id") and port["device_id"] != instance.uuid:
            raise errors.PortInUse(port_id)
        body = {**self._binding(instance), **_allocation_update(instance, port)}
        port = self.client.update("ports", port_id, body)
        try:
            _check_bound(port, instance)
        except BaseException:
            self._release(port)
            raise
        return port

    def port_resource_requests(self, requested: Sequence[RequestedNetwork]) -> PortRequests:
        ports = [self._port(str(item.port_id), None) for item in requested if item.port_id]
        return ports_requests(ports)

    def bind_to_host(self, instance: InstanceNetRef) -> NetworkInfo:
        """The server's ports bound to ``instance.host`` (unbound when None): a move's
        destination, or a shelve-offload."""
        ports = self.client.list("ports", {"device_id": instance.uuid})
        bound = [
            self.client.update(
                "ports",
                p["id"],
                {"binding:host_id": instance.host, **_allocation_update(instance, p)},
            )
            for p in ports
        ]
        for port in bound:
            _check_bound(port, instance)
        return self._vifs(instance, bound)

    def deallocate_for_instance(self, instance: InstanceNetRef) -> None:
        for port in self.client.list("ports", {"device_id": instance.uuid}):
            self._release(port)

    def get_instance_nw_info(self, instance: InstanceNetRef) -> NetworkInfo:
        return self._vifs(instance, self.client.list("ports", {"device_id": instance.uuid}))

    def _vifs(self, instance: InstanceNetRef, ports: list[Doc]) -> NetworkInfo:
        """network_info for ``ports``: one list call each for their networks, subnets and
        floating IPs."""
        if not ports:
            return []
        net_ids = sorted({p["network_id"] for p in ports})
        subnet_ids = sorted({f["subnet_id"] for p in ports for f in p.get("fixed_ips") or ()})
        networks = {n["id"]: n for n in self.client.list("networks", {"id": net_ids})}
        subnets = {s["id"]: s for s in self.client.list("subnets", {"id": subnet_ids})} if subnet_ids else {}  # fmt: skip
        floating = {
            str(f["fixed_ip_address"]): str(f["floating_ip_address"])
            for f in self.client.list("floatingips", {"port_id": [p["id"] for p in ports]})
            if f.get("fixed_ip_address")
        }
        return [
            vif(p, networks.get(p["network_id"]), subnets, floating,
                created=CREATED_TAG in (p.get("tags") or ()), ovs_bridge=self.ovs_bridge)
            for p in sorted(ports, key=lambda p: str(p.get("created_at") or ""))
        ]  # fmt: skip


def _allocation_update(instance: InstanceNetRef, port: Doc) -> Doc:
    """``binding:profile`` with the allocation of the port's resource request on the
    instance's host (decision 0076), or nothing to change."""
    profile = profile_with_allocation(
        instance, port["id"], port.get("resource_request"), port.get("binding:profile")
    )
    return {} if profile is None else {"binding:profile": profile}


def _check_bound(port: Doc, instance: InstanceNetRef) -> None:
    """A port a host was asked for but no mechanism driver bound fails the build, as Nova's
    driver fails on a ``binding_failed`` VIF."""
    if instance.host and port.get("binding:vif_type") in UNBOUND_TYPES:
        raise errors.PortBindingFailed(str(port["id"]))


def _port_error(fault: NeutronFault, network_id: str, address: str | None) -> Exception:
    """Nova's error for a port Neutron would not create."""
    if fault.kind == "IpAddressAlreadyAllocated" or fault.kind == "IpAddressInUse":
        return errors.FixedIpAlreadyInUse(str(address))
    if fault.kind == "IpAddressGenerationFailure":
        return errors.NoMoreFixedIps(network_id)
    if fault.kind == "OverQuota":
        return errors.PortLimitExceeded()
    if fault.kind in ("InvalidIpForNetwork", "InvalidIpForSubnet") and address:
        return errors.FixedIpNotInNetwork(address, network_id)
    return errors.NetworkError(f"Neutron refused the port: {fault.message}")


def _port_doc(port: Doc) -> dict[str, Any]:
    return {"id": port["id"], "network_id": port["network_id"],
            "mac_address": port.get("mac_address"), "status": port.get("status"),
            "fixed_ips": port.get("fixed_ips") or [], "device_id": port.get("device_id"),
            "tag": None, "resource_request": port.get("resource_request"),
            "binding:profile": port.get("binding:profile") or {}}  # fmt: skip
