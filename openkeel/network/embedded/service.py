"""The network service's use cases: Neutron's rules over the rows of
:class:`openkeel.db.network_store.NetworkStore`.

Visibility as Neutron's default policies: an admin sees everything; a project sees its own
resources, shared and external networks and their subnets; anything else is "not found". Only
an admin makes shared or external networks, sets provider attributes or binds ports to hosts.
Every project gets a ``default`` security group the first time it touches security groups or
makes a port (Neutron's rule), with Neutron's default rules. Addresses come from the subnet's
allocation pools, one claim per address (no duplicate fixed IP, in any process). Quotas are
Neutron's defaults, counted per project on create.
"""

from __future__ import annotations

import contextlib
import ipaddress
import random
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from openkeel.db.network_store import NetworkStore, Row
from openkeel.network.embedded.faults import (
    BadRequest,
    Conflict,
    InvalidInput,
    NotFound,
    PolicyNotAuthorized,
    not_found,
)

__all__ = ["QUOTAS", "Caller", "NetworkService", "Row"]

QUOTAS = {
    "network": 100, "subnet": 100, "port": 500, "router": 10, "floatingip": 50,
    "security_group": 10, "security_group_rule": 100, "rbac_policy": 10, "subnetpool": -1,
}  # fmt: skip
_QUOTA_KINDS = {
    "networks": "network", "subnets": "subnet", "ports": "port", "floatingips": "floatingip",
    "security_groups": "security_group", "security_group_rules": "security_group_rule",
    "routers": "router",
}  # fmt: skip
ROUTER_INTERFACE = "network:router_interface"
ROUTER_GATEWAY = "network:router_gateway"
PROTOCOLS = {
    "ah": 51, "dccp": 33, "egp": 8, "esp": 50, "gre": 47, "icmp": 1, "icmpv6": 58, "igmp": 2,
    "ipip": 4, "ipv6-encap": 41, "ipv6-frag": 44, "ipv6-icmp": 58, "ipv6-nonxt": 59,
    "ipv6-opts": 60, "ipv6-route": 43, "ospf": 89, "pgm": 113, "rsvp": 46, "sctp": 132,
    "tcp": 6, "udp": 17, "udplite": 136, "vrrp": 112,
}  # fmt: skip
_PORT_PROTOCOLS = {"tcp", "udp", "sctp", "udplite", "dccp", "6", "17", "132", "136", "33"}
_ICMP_PROTOCOLS = {"icmp", "icmpv6", "ipv6-icmp", "1", "58"}


@dataclass(frozen=True)
class Caller:
    """Who calls: their project and whether they are an administrator."""

    project_id: str | None
    is_admin: bool


def new_id() -> str:
    return str(uuid.uuid4())


def random_mac() -> str:
    """A MAC in OpenStack's fa:16:3e prefix."""
    return "fa:16:3e:" + ":".join(f"{random.randint(0, 255):02x}" for _ in range(3))


class NetworkService:
    """Networks, subnets, ports, security groups and floating IPs with Neutron's rules."""

    def __init__(
        self, store: NetworkStore, notify: Callable[[str, str, str], None] | None = None
    ) -> None:
        self.store = store
        # (server uuid, event name, port id) for a change a server's network info must follow
        # (Neutron's notifications to Nova: network-changed, network-vif-deleted).
        self._notify = notify

    def _changed(self, port: Row | None, event: str = "network-changed") -> None:
        if self._notify is None or port is None:
            return
        if port["device_id"] and str(port["device_owner"]).startswith("compute:"):
            self._notify(str(port["device_id"]), event, str(port["id"]))

    # -- visibility -------------------------------------------------------------------------

    def _owned(self, caller: Caller, row: Row) -> bool:
        return caller.is_admin or row["project_id"] == caller.project_id

    def _visible_network(self, caller: Caller, row: Row) -> bool:
        return self._owned(caller, row) or row["shared"] or row["external"]

    def _find(self, caller: Caller, kind: str, ident: str) -> Row:
        row = self.store.get(kind, ident)
        singular = {"networks": "network", "subnets": "subnet", "ports": "port",
                    "security_groups": "security_group", "floatingips": "floatingip",
                    "security_group_rules": "security_group_rule",
                    "qos_policies": "qos_policy", "routers": "router"}[kind]  # fmt: skip
        if row is None or not self._visible(caller, kind, row):
            raise not_found(singular, ident)
        return row

    def _visible(self, caller: Caller, kind: str, row: Row) -> bool:
        if kind == "networks":
            return self._visible_network(caller, row)
        if kind == "qos_policies":
            return self._owned(caller, row) or bool(row["shared"])
        if kind == "subnets":
            network = self.store.get("networks", row["network_id"])
            return self._owned(caller, row) or (
                network is not None and self._visible_network(caller, network)
            )
        return self._owned(caller, row)

    def visible(self, caller: Caller, kind: str) -> list[Row]:
        """Every row of ``kind`` the caller may see."""
        if kind == "security_groups" and caller.project_id:
            self.default_security_group(caller.project_id)
        return [row for row in self.store.list(kind) if self._visible(caller, kind, row)]

    def show(self, caller: Caller, kind: str, ident: str) -> Row:
        if kind == "security_groups" and caller.project_id:
            self.default_security_group(caller.project_id)
        return self._find(caller, kind, ident)

    def _project_of(self, caller: Caller, ref: Mapping[str, Any]) -> str:
        """The project a new resource belongs to (another project's: admins only)."""
        wanted = ref.get("project_id") or ref.get("tenant_id") or caller.project_id
        if wanted != caller.project_id and not caller.is_admin:
            raise PolicyNotAuthorized("rule:admin_only")
        if not wanted:
            raise BadRequest("A project is required.")
        return str(wanted)

    def _check_quota(self, kind: str, project_id: str) -> None:
        limit = QUOTAS[_QUOTA_KINDS[kind]]
        if limit >= 0 and len(self.store.list(kind, project_id=project_id)) >= limit:
            raise Conflict(f"Quota exceeded for resources: ['{_QUOTA_KINDS[kind]}'].", "OverQuota")

    def usage(self, project_id: str) -> dict[str, int]:
        """How many of each quota'd resource the project has."""
        return {name: len(self.store.list(kind, project_id=project_id))
                for kind, name in _QUOTA_KINDS.items()}  # fmt: skip

    # -- networks ---------------------------------------------------------------------------

    def create_network(self, caller: Caller, ref: Mapping[str, Any]) -> Row:
        for attr, rule in (
            ("shared", "create_network:shared"),
            ("router:external", "create_network:router:external"),
            ("provider:network_type", "create_network:provider:network_type"),
            ("is_default", "create_network:is_default"),
        ):
            if ref.get(attr) and not caller.is_admin:
                raise PolicyNotAuthorized(f"rule:{rule}")  # fmt: skip
        project = self._project_of(caller, ref)
        self._check_quota("networks", project)
        network_id = new_id()
        if ref.get("is_default"):  # Neutron checks even for a network not external
            self._check_default_external(network_id)
        row = self.store.insert("networks", {
            "id": network_id, "name": ref.get("name") or "", "project_id": project,
            "description": ref.get("description") or "",
            "admin_state_up": ref.get("admin_state_up", True), "shared": bool(ref.get("shared")),
            "external": bool(ref.get("router:external")), "mtu": ref.get("mtu") or 1500,
            "network_type": ref.get("provider:network_type") or "flat",
        })  # fmt: skip
        if row["external"] and "is_default" in ref:
            self._set_default_external(network_id, bool(ref["is_default"]))
        return row

    def default_external(self) -> str | None:
        """The deployment's default external network (Neutron's ``is_default``), if any."""
        found = self.store.list("default_external")
        return str(found[0]["id"]) if found else None

    def _check_default_external(self, network_id: str) -> None:
        current = self.default_external()
        if current is not None and current != network_id:
            raise Conflict(f"A default external network already exists: {current}.",
                           "DefaultExternalNetworkExists")  # fmt: skip

    def _set_default_external(self, network_id: str, default: bool) -> None:
        if not default:
            self.store.delete("default_external", network_id)
            return
        self._check_default_external(network_id)
        if self.store.get("default_external", network_id) is None:
            # IntegrityError: another request made it the default at the same time
            with contextlib.suppress(sa.exc.IntegrityError):
                self.store.insert("default_external", {"id": network_id})

    def update_network(self, caller: Caller, ident: str, ref: Mapping[str, Any]) -> Row:
        row = self._find(caller, "networks", ident)
        if not self._owned(caller, row):
            raise PolicyNotAuthorized("rule:update_network")
        for attr in ("shared", "router:external", "is_default"):
            if attr in ref and not caller.is_admin:
                raise PolicyNotAuthorized(f"rule:update_network:{attr}")
        values = {k: ref[k] for k in ("name", "description", "admin_state_up", "shared", "mtu")
                  if k in ref}  # fmt: skip
        if "router:external" in ref:
            values["external"] = bool(ref["router:external"])
        external = values.get("external", row["external"])
        if external and ref.get("is_default"):
            self._check_default_external(ident)
        updated = self._updated("networks", ident, values)
        if not external:
            self.store.delete("default_external", ident)
        elif "is_default" in ref:
            self._set_default_external(ident, bool(ref["is_default"]))
        return updated

    def delete_network(self, caller: Caller, ident: str) -> None:
        row = self._find(caller, "networks", ident)
        if not self._owned(caller, row):
            raise PolicyNotAuthorized("rule:delete_network")
        in_use = [p for p in self.store.list("ports", network_id=ident)
                  if not p["device_owner"].startswith("network:")
                  or p["device_owner"] in (ROUTER_INTERFACE, ROUTER_GATEWAY)]  # fmt: skip
        if in_use or self.store.list("floatingips", floating_network_id=ident):
            raise Conflict(
                f"Unable to complete operation on network {ident}. There are one or more "
                "ports still in use on the network.", "NetworkInUse")  # fmt: skip
        for port in self.store.list("ports", network_id=ident):
            self._delete_port_row(port)
        for subnet in self.store.list("subnets", network_id=ident):
            self.store.delete("subnets", subnet["id"])
        self.store.delete("default_external", ident)
        self.store.delete("networks", ident)

    # -- subnets ----------------------------------------------------------------------------

    def create_subnet(self, caller: Caller, ref: Mapping[str, Any]) -> Row:
        network = self._find(caller, "networks", str(ref["network_id"]))
        if not self._owned(caller, network):
            raise PolicyNotAuthorized("rule:create_subnet")
        project = self._project_of(caller, ref)
        self._check_quota("subnets", project)
        version = int(ref.get("ip_version", 4))
        try:
            cidr = ipaddress.ip_network(str(ref["cidr"]), strict=False)
        except ValueError as exc:
            raise InvalidInput(f"'{ref['cidr']}' is not a valid IP subnet") from exc
        if cidr.version != version:
            raise InvalidInput("Cidr and IP version are not compatible")
        if cidr.prefixlen >= cidr.max_prefixlen - 1 and version == 4:
            raise InvalidInput(f"Invalid CIDR {cidr} for IP version {version}")
        for other in self.store.list("subnets", network_id=network["id"]):
            if cidr.overlaps(ipaddress.ip_network(other["cidr"])):
                raise InvalidInput(
                    f"Requested subnet with cidr: {cidr} for network: {network['id']} "
                    "overlaps with another subnet")  # fmt: skip
        hosts = cidr.hosts()
        gateway: str | None
        if "gateway_ip" in ref and ref["gateway_ip"] is None:
            gateway = None
        elif ref.get("gateway_ip"):
            gateway = str(_address_in(str(ref["gateway_ip"]), cidr))
        else:
            gateway = str(next(hosts))
        pools = ref.get("allocation_pools") or _default_pools(cidr, gateway)
        for pool in pools:
            start, end = _address_in(pool["start"], cidr), _address_in(pool["end"], cidr)
            if int(end) < int(start):
                raise InvalidInput(f"Invalid allocation pool {pool['start']}-{pool['end']}")
            if gateway is not None and int(start) <= int(ipaddress.ip_address(gateway)) <= int(end):
                raise Conflict(f"Gateway ip {gateway} conflicts with allocation pool "
                               f"{pool['start']}-{pool['end']}.", "GatewayConflictWithAllocationPools")  # fmt: skip
        return self.store.insert("subnets", {
            "id": new_id(), "name": ref.get("name") or "", "project_id": project,
            "description": ref.get("description") or "", "network_id": network["id"],
            "cidr": str(cidr), "ip_version": version, "gateway_ip": gateway,
            "enable_dhcp": ref.get("enable_dhcp", True),
            "allocation_pools": [{"start": str(p["start"]), "end": str(p["end"])} for p in pools],
            "dns_nameservers": list(ref.get("dns_nameservers") or []),
            "host_routes": list(ref.get("host_routes") or []),
        })  # fmt: skip

    def update_subnet(self, caller: Caller, ident: str, ref: Mapping[str, Any]) -> Row:
        row = self._find(caller, "subnets", ident)
        if not self._owned(caller, row):
            raise PolicyNotAuthorized("rule:update_subnet")
        values = {k: ref[k] for k in ("name", "description", "enable_dhcp", "dns_nameservers",
                                      "host_routes") if k in ref}  # fmt: skip
        return self._updated("subnets", ident, values)

    def delete_subnet(self, caller: Caller, ident: str) -> None:
        row = self._find(caller, "subnets", ident)
        if not self._owned(caller, row):
            raise PolicyNotAuthorized("rule:delete_subnet")
        if self.store.subnet_in_use(ident):
            raise Conflict(
                f"Unable to complete operation on subnet {ident}: One or more ports have an IP "
                "allocation from this subnet.", "SubnetInUse")  # fmt: skip
        self.store.delete("subnets", ident)

    # -- ports ------------------------------------------------------------------------------

    def create_port(
        self, caller: Caller, ref: Mapping[str, Any], own: Mapping[str, Any] | None = None
    ) -> Row:
        """A port on a visible network; ``own`` sets OpenKeel's own columns (compute's)."""
        network = self._find(caller, "networks", str(ref["network_id"]))
        if not (self._owned(caller, network) or network["shared"]):
            raise not_found("network", network["id"])
        project = self._project_of(caller, ref)
        self._check_quota("ports", project)
        self._admin_only_binding(caller, ref)
        owner = str(ref.get("device_owner") or "")
        port_security = ref.get("port_security_enabled", True)
        groups = self._port_groups(caller, project, ref, owner, port_security)
        port_id = new_id()
        fixed = self._claim_fixed_ips(network, port_id, ref.get("fixed_ips"))
        mac = str(ref.get("mac_address") or random_mac())
        try:
            return self.store.insert("ports", {
                "id": port_id, "name": ref.get("name") or "", "project_id": project,
                "description": ref.get("description") or "", "network_id": network["id"],
                "mac_address": mac.lower(), "admin_state_up": ref.get("admin_state_up", True),
                "status": "DOWN", "device_id": ref.get("device_id") or "", "device_owner": owner,
                "fixed_ips": fixed, "security_groups": groups,
                "port_security_enabled": port_security,
                "binding_host_id": ref.get("binding:host_id") or "",
                "binding_profile": ref.get("binding:profile") or {},
                "binding_vnic_type": ref.get("binding:vnic_type") or "normal",
                "allowed_address_pairs": list(ref.get("allowed_address_pairs") or []),
            **(own or {}),
            })  # fmt: skip
        except sa.exc.IntegrityError as exc:
            self.store.release(port_id)
            raise Conflict(f"Unable to complete operation for network {network['id']}. The mac "
                           f"address {mac} is in use.", "MacAddressInUse") from exc  # fmt: skip

    def _admin_only_binding(self, caller: Caller, ref: Mapping[str, Any]) -> None:
        for attr in ("binding:host_id", "binding:profile"):
            if attr in ref and not caller.is_admin:
                raise PolicyNotAuthorized(f"rule:create_port:{attr}")

    def _port_groups(
        self, caller: Caller, project: str, ref: Mapping[str, Any], owner: str, secure: bool
    ) -> list[str]:
        if "security_groups" in ref and ref["security_groups"] is not None:
            groups = [str(g) for g in ref["security_groups"]]
            for group in groups:
                self._find(caller, "security_groups", group)
            if groups and not secure:
                raise Conflict("Port has security group associated. Cannot disable port "
                               "security or ip address until security group is removed",
                               "PortSecurityAndIPRequiredForSecurityGroups")  # fmt: skip
            return groups
        if owner.startswith("network:") or not secure:
            return []
        return [self.default_security_group(project)]

    def _claim_fixed_ips(
        self, network: Row, holder: str, wanted: Sequence[Mapping[str, Any]] | None
    ) -> list[dict[str, str]]:
        subnets = {s["id"]: s for s in self.store.list("subnets", network_id=network["id"])}
        if wanted is None:
            first = next((s for s in subnets.values() if s["ip_version"] == 4), None)
            first = first or next(iter(subnets.values()), None)
            wanted = [] if first is None else [{"subnet_id": first["id"]}]
        claimed: list[dict[str, str]] = []
        try:
            for item in wanted:
                claimed.append(self._claim_one(network, subnets, holder, item))
        except Exception:
            self.store.release(holder, [c["ip_address"] for c in claimed])
            raise
        return claimed

    def _claim_one(
        self, network: Row, subnets: Mapping[str, Row], holder: str, item: Mapping[str, Any]
    ) -> dict[str, str]:
        address = item.get("ip_address")
        subnet = subnets.get(str(item.get("subnet_id"))) if item.get("subnet_id") else None
        if item.get("subnet_id") and subnet is None:
            raise not_found("subnet", str(item["subnet_id"]))
        if address is not None:
            try:
                ip = ipaddress.ip_address(str(address))
            except ValueError as exc:
                raise InvalidInput(f"{address} is not a valid IP address") from exc
            if subnet is None:
                subnet = next((s for s in subnets.values()
                               if ip in ipaddress.ip_network(s["cidr"])), None)  # fmt: skip
            if subnet is None or ip not in ipaddress.ip_network(subnet["cidr"]):
                raise BadRequest(f"IP address {address} is not a valid IP for the specified "
                                 "subnet.", "InvalidIpForSubnet")  # fmt: skip
            if str(ip) == subnet["gateway_ip"]:
                raise Conflict(f"Unable to complete operation for network {network['id']}. The "
                               f"IP address {ip} is in use.", "IpAddressInUse")  # fmt: skip
            if not self.store.claim(network["id"], subnet["id"], str(ip), holder):
                raise Conflict(f"Unable to complete operation for network {network['id']}. The "
                               f"IP address {ip} is in use.", "IpAddressInUse")  # fmt: skip
            return {"subnet_id": subnet["id"], "ip_address": str(ip)}
        if subnet is None:
            raise InvalidInput("A subnet or an IP address is required for a fixed IP")
        taken = self.store.allocated(network["id"])
        free = (a for a in _pool_addresses(subnet) if a not in taken)
        found = self.store.claim_first(network["id"], subnet["id"], free, holder)
        if found is None:
            raise Conflict(f"No more IP addresses available on network {network['id']}.",
                           "IpAddressGenerationFailure")  # fmt: skip
        return {"subnet_id": subnet["id"], "ip_address": found}

    def update_port(self, caller: Caller, ident: str, ref: Mapping[str, Any]) -> Row:
        row = self._find(caller, "ports", ident)
        self._admin_only_binding(caller, ref)
        values = {k: ref[k] for k in ("name", "description", "admin_state_up", "device_id",
                                      "device_owner", "allowed_address_pairs") if k in ref}  # fmt: skip
        for attr in ("binding:host_id", "binding:profile", "binding:vnic_type"):
            if attr in ref:
                values[attr.replace(":", "_")] = ref[attr] if ref[attr] is not None else ""
        secure = ref.get("port_security_enabled", row["port_security_enabled"])
        groups = row["security_groups"]
        if "security_groups" in ref:
            groups = [str(g) for g in ref["security_groups"] or []]
            for group in groups:
                self._find(caller, "security_groups", group)
            values["security_groups"] = groups
        if groups and not secure:
            raise Conflict("Port has security group associated. Cannot disable port security "
                           "or ip address until security group is removed",
                           "PortSecurityAndIPRequiredForSecurityGroups")  # fmt: skip
        values["port_security_enabled"] = secure
        if "fixed_ips" in ref:
            network = self.store.get("networks", row["network_id"])
            assert network is not None
            keep = {(f["subnet_id"], f["ip_address"]) for f in row["fixed_ips"]}
            new_holder = new_id()
            wanted = [f for f in ref["fixed_ips"]
                      if (f.get("subnet_id"), f.get("ip_address")) not in keep]  # fmt: skip
            kept = [f for f in row["fixed_ips"]
                    if any(w.get("ip_address") == f["ip_address"] for w in ref["fixed_ips"])]  # fmt: skip
            claimed = self._claim_fixed_ips(network, new_holder, wanted)
            released = [f["ip_address"] for f in row["fixed_ips"] if f not in kept]
            self.store.release(ident, released)
            self._rehome(new_holder, ident, claimed)
            values["fixed_ips"] = kept + claimed
        updated = self._updated("ports", ident, values)
        if "fixed_ips" in ref:
            self._changed(updated)
        return updated

    def _rehome(self, temporary: str, holder: str, claimed: list[dict[str, str]]) -> None:
        """Addresses claimed under a temporary holder move to the port."""
        self.store.release(temporary, [c["ip_address"] for c in claimed])
        for item in claimed:
            subnet = self.store.get("subnets", item["subnet_id"])
            assert subnet is not None
            self.store.claim(subnet["network_id"], subnet["id"], item["ip_address"], holder)

    def delete_port(self, caller: Caller, ident: str) -> None:
        row = self._find(caller, "ports", ident)
        self._delete_port_row(row)

    def _delete_port_row(self, row: Row) -> None:
        for fip in self.store.list("floatingips", port_id=row["id"]):
            self.store.update("floatingips", fip["id"],
                              {"port_id": None, "fixed_ip_address": None, "status": "DOWN"})  # fmt: skip
        self.store.delete("ports", row["id"])
        self.store.release(row["id"])
        self._changed(row, "network-vif-deleted")

    # -- security groups ---------------------------------------------------------------------

    def default_security_group(self, project_id: str) -> str:
        """The project's ``default`` group, made with Neutron's rules the first time."""
        found = self.store.default_security_group(project_id)
        if found is not None:
            return found
        group = self.store.insert("security_groups", {
            "id": new_id(), "name": "default", "project_id": project_id,
            "description": "Default security group", "stateful": True,
        })  # fmt: skip
        if not self.store.set_default_security_group(project_id, group["id"]):
            self.store.delete("security_groups", group["id"])  # another request won
            winner = self.store.default_security_group(project_id)
            assert winner is not None
            return winner
        for ethertype in ("IPv4", "IPv6"):
            self._insert_rule(project_id, group["id"], "egress", ethertype)
            self._insert_rule(project_id, group["id"], "ingress", ethertype,
                              remote_group_id=group["id"])  # fmt: skip
        return str(group["id"])

    def _insert_rule(
        self, project_id: str, group_id: str, direction: str, ethertype: str, **more: Any
    ) -> Row:
        return self.store.insert("security_group_rules", {
            "id": new_id(), "project_id": project_id, "security_group_id": group_id,
            "direction": direction, "ethertype": ethertype, "description": "", **more,
        })  # fmt: skip

    def create_security_group(self, caller: Caller, ref: Mapping[str, Any]) -> Row:
        project = self._project_of(caller, ref)
        self.default_security_group(project)
        if ref.get("name") == "default":
            raise Conflict(
                "Default security group already exists.", "SecurityGroupDefaultAlreadyExists"
            )
        self._check_quota("security_groups", project)
        group = self.store.insert("security_groups", {
            "id": new_id(), "name": ref.get("name") or "", "project_id": project,
            "description": ref.get("description") or "", "stateful": ref.get("stateful", True),
        })  # fmt: skip
        for ethertype in ("IPv4", "IPv6"):
            self._insert_rule(project, group["id"], "egress", ethertype)
        return group

    def update_security_group(self, caller: Caller, ident: str, ref: Mapping[str, Any]) -> Row:
        row = self._find(caller, "security_groups", ident)
        if row["name"] == "default" and ref.get("name") not in (None, "default"):
            raise Conflict("Updating default security group not allowed.",
                           "SecurityGroupCannotUpdateDefault")  # fmt: skip
        values = {k: ref[k] for k in ("name", "description", "stateful") if k in ref}
        return self._updated("security_groups", ident, values)

    def delete_security_group(self, caller: Caller, ident: str) -> None:
        row = self._find(caller, "security_groups", ident)
        if (
            row["name"] == "default"
            and self.store.default_security_group(row["project_id"]) == ident
        ) and not caller.is_admin:
            raise Conflict("Insufficient rights for removing default security group.",
                           "SecurityGroupCannotRemoveDefault")  # fmt: skip
        if any(ident in p["security_groups"] for p in self.store.list("ports")):
            raise Conflict(f"Security Group {ident} in use.", "SecurityGroupInUse")
        self.store.delete("security_groups", ident)

    def rules_of(self, group_id: str) -> list[Row]:
        return self.store.list("security_group_rules", security_group_id=group_id)

    def create_rule(self, caller: Caller, ref: Mapping[str, Any]) -> Row:
        group = self._find(caller, "security_groups", str(ref["security_group_id"]))
        project = self._project_of(
            caller, {**ref, "project_id": ref.get("project_id") or group["project_id"]}
        )
        self._check_quota("security_group_rules", project)
        rule = _normalized_rule(ref)
        if rule["remote_group_id"] is not None:
            self._find(caller, "security_groups", rule["remote_group_id"])
        for existing in self.rules_of(group["id"]):
            if all(_same(k, existing[k], rule[k]) for k in rule):
                raise Conflict(f"Security group rule already exists. Rule id is {existing['id']}.",
                               "SecurityGroupRuleExists")  # fmt: skip
        return self._insert_rule(project, group["id"], rule.pop("direction"), rule.pop("ethertype"),
                                 description=ref.get("description") or "", **rule)  # fmt: skip

    def delete_rule(self, caller: Caller, ident: str) -> None:
        self._find(caller, "security_group_rules", ident)
        self.store.delete("security_group_rules", ident)

    # -- floating IPs -------------------------------------------------------------------------

    def create_floating_ip(self, caller: Caller, ref: Mapping[str, Any]) -> Row:
        network = self._find(caller, "networks", str(ref["floating_network_id"]))
        if not network["external"]:
            raise BadRequest(f"Bad floatingip request: Network {network['id']} is not a valid "
                             "external network.")  # fmt: skip
        project = self._project_of(caller, ref)
        self._check_quota("floatingips", project)
        fip_id = new_id()
        wanted = None
        if ref.get("floating_ip_address"):
            wanted = [{"ip_address": ref["floating_ip_address"]}]
        claimed = self._claim_fixed_ips(network, fip_id, wanted)
        if not claimed:
            raise Conflict(f"No more IP addresses available on network {network['id']}.",
                           "IpAddressGenerationFailure")  # fmt: skip
        try:
            association = self._association(caller, ref)
        except Exception:
            self.store.release(fip_id)
            raise
        created = self.store.insert("floatingips", {
            "id": fip_id, "name": "", "project_id": project,
            "description": ref.get("description") or "", "floating_network_id": network["id"],
            "floating_ip_address": claimed[0]["ip_address"], **association,
        })  # fmt: skip
        if created["port_id"]:
            self._changed(self.store.get("ports", created["port_id"]))
        return created

    def _association(self, caller: Caller, ref: Mapping[str, Any]) -> dict[str, Any]:
        port_id = ref.get("port_id")
        if not port_id:
            return {"port_id": None, "fixed_ip_address": None, "status": "DOWN"}
        port = self._find(caller, "ports", str(port_id))
        addresses = [f["ip_address"] for f in port["fixed_ips"]
                     if ipaddress.ip_address(f["ip_address"]).version == 4]  # fmt: skip
        fixed = ref.get("fixed_ip_address") or (addresses[0] if addresses else None)
        if fixed is None or fixed not in addresses:
            raise BadRequest(f"Bad floatingip request: Port {port['id']} does not have fixed ip "
                             f"{fixed}.")  # fmt: skip
        subnet_id = next(f["subnet_id"] for f in port["fixed_ips"] if f["ip_address"] == fixed)
        self._check_reachable(str(ref["floating_network_id"]), subnet_id, port["id"])
        for other in self.store.list("floatingips", port_id=port["id"]):
            if other["fixed_ip_address"] == fixed and other["id"] != ref.get("id"):
                raise Conflict(f"Cannot associate floating IP {other['floating_ip_address']} "
                               f"({other['id']}) with port {port['id']} using fixed IP {fixed}, "
                               "as that fixed IP already has a floating IP on external network "
                               f"{other['floating_network_id']}.", "FloatingIPPortAlreadyAssociated")  # fmt: skip
        return {"port_id": port["id"], "fixed_ip_address": fixed, "status": "ACTIVE"}

    def _check_reachable(self, network_id: str, subnet_id: str, port_id: str) -> None:
        """Neutron's rule: a router with a gateway on the floating IP's network and an
        interface on the port's subnet."""
        for router in self.store.list("routers", gw_network_id=network_id):
            for port in self.store.list("ports", device_id=router["id"],
                                        device_owner=ROUTER_INTERFACE):  # fmt: skip
                if any(f["subnet_id"] == subnet_id for f in port["fixed_ips"]):
                    return
        raise NotFound(f"External network {network_id} is not reachable from subnet "
                       f"{subnet_id}.  Therefore, cannot associate Port {port_id} with a "
                       "Floating IP.", "ExternalGatewayForFloatingIPNotFound")  # fmt: skip

    def update_floating_ip(self, caller: Caller, ident: str, ref: Mapping[str, Any]) -> Row:
        fip = self._find(caller, "floatingips", ident)
        values: dict[str, Any] = {}
        if "port_id" in ref:
            ref = {**ref, "id": ident, "floating_network_id": fip["floating_network_id"]}
            values.update(self._association(caller, ref))
        if "description" in ref:
            values["description"] = ref["description"] or ""
        before = self.store.get("floatingips", ident)
        updated = self._updated("floatingips", ident, values)
        for port_id in {before["port_id"] if before else None, updated["port_id"]} - {None}:
            self._changed(self.store.get("ports", str(port_id)))
        return updated

    def delete_floating_ip(self, caller: Caller, ident: str) -> None:
        fip = self._find(caller, "floatingips", ident)
        self.store.delete("floatingips", ident)
        self.store.release(ident)
        if fip["port_id"]:
            self._changed(self.store.get("ports", fip["port_id"]))

    # -- routers ------------------------------------------------------------------------------

    def create_router(self, caller: Caller, ref: Mapping[str, Any]) -> Row:
        project = self._project_of(caller, ref)
        self._check_quota("routers", project)
        router = self.store.insert("routers", {
            "id": new_id(), "name": ref.get("name") or "", "project_id": project,
            "description": ref.get("description") or "",
            "admin_state_up": ref.get("admin_state_up", True), "status": "ACTIVE",
        })  # fmt: skip
        if ref.get("external_gateway_info"):
            try:
                return self._set_gateway(caller, router, ref["external_gateway_info"])
            except Exception:
                self.store.delete("routers", router["id"])
                raise
        return router

    def update_router(self, caller: Caller, ident: str, ref: Mapping[str, Any]) -> Row:
        router = self._find(caller, "routers", ident)
        values = {k: ref[k] for k in ("name", "description", "admin_state_up") if k in ref}
        if "external_gateway_info" in ref:
            router = self._set_gateway(caller, router, ref["external_gateway_info"] or {})
        return self._updated("routers", ident, values)

    def _set_gateway(self, caller: Caller, router: Row, info: Mapping[str, Any]) -> Row:
        """Set, change or clear (``{}``) the router's gateway port."""
        if not isinstance(info, Mapping):
            raise BadRequest("Invalid input for external_gateway_info. Reason: "
                             f"'{info}' is not a dictionary.")  # fmt: skip
        network_id = info.get("network_id")
        snat = info.get("enable_snat", True)
        if "enable_snat" in info and not caller.is_admin:
            raise PolicyNotAuthorized("rule:create_router:external_gateway_info:enable_snat")
        if info.get("external_fixed_ips") and not caller.is_admin:
            raise PolicyNotAuthorized("rule:create_router:external_gateway_info:external_fixed_ips")
        if network_id:
            network = self._find(caller, "networks", str(network_id))
            if not network["external"]:
                raise BadRequest(f"Bad router request: Network {network_id} is not an external "
                                 "network.", "BadRequest")  # fmt: skip
            if network_id == router["gw_network_id"] and not info.get("external_fixed_ips"):
                return self._updated("routers", router["id"], {"enable_snat": bool(snat)})
        if router["gw_port_id"]:
            if network_id != router["gw_network_id"]:
                self._check_gateway_unused(router)
            gone = self.store.get("ports", router["gw_port_id"])
            if gone is not None:
                self._delete_port_row(gone)
        values: dict[str, Any] = {"gw_network_id": None, "gw_port_id": None, "enable_snat": True}
        if network_id:
            port = self._gateway_port(router, str(network_id), info)
            values = {"gw_network_id": network_id, "gw_port_id": port["id"],
                      "enable_snat": bool(snat)}  # fmt: skip
        return self._updated("routers", router["id"], values)

    def _gateway_port(self, router: Row, network_id: str, info: Mapping[str, Any]) -> Row:
        network = self.store.get("networks", network_id)
        assert network is not None
        port_id = new_id()
        fixed = self._claim_fixed_ips(network, port_id, info.get("external_fixed_ips") or None)
        if not fixed and self.store.list("subnets", network_id=network_id):
            # (no subnet at all: Neutron makes the gateway port without addresses)
            raise Conflict(f"No more IP addresses available on network {network_id}.",
                           "IpAddressGenerationFailure")  # fmt: skip
        # Neutron's gateway port belongs to no project (only admins list it).
        return self.store.insert("ports", {
            "id": port_id, "name": "", "project_id": "", "description": "",
            "network_id": network_id, "mac_address": random_mac(), "status": "ACTIVE",
            "device_id": router["id"], "device_owner": ROUTER_GATEWAY, "fixed_ips": fixed,
            "security_groups": [], "port_security_enabled": False,
        })  # fmt: skip

    def _check_gateway_unused(self, router: Row) -> None:
        """A gateway serving floating IPs cannot go (Neutron's RouterExternalGatewayInUseByFloatingIp)."""
        subnets = {f["subnet_id"] for p in self.store.list("ports", device_id=router["id"],
                                                            device_owner=ROUTER_INTERFACE)
                   for f in p["fixed_ips"]}  # fmt: skip
        for fip in self.store.list("floatingips", floating_network_id=router["gw_network_id"]):
            port = self.store.get("ports", fip["port_id"]) if fip["port_id"] else None
            if port and any(f["subnet_id"] in subnets for f in port["fixed_ips"]):
                raise Conflict(f"Gateway cannot be updated for router {router['id']}, since a "
                               f"gateway to external network {router['gw_network_id']} is "
                               "required by one or more floating IPs.",
                               "RouterExternalGatewayInUseByFloatingIp")  # fmt: skip

    def delete_router(self, caller: Caller, ident: str) -> None:
        router = self._find(caller, "routers", ident)
        interfaces = self.router_interfaces(ident)
        if interfaces:
            attached = ", ".join(p["id"] for p in interfaces)
            raise Conflict(f"Router {ident} has ports still attached: {attached}", "RouterInUse")
        if router["gw_port_id"]:
            self._check_gateway_unused(router)
            port = self.store.get("ports", router["gw_port_id"])
            if port is not None:
                self._delete_port_row(port)
        self.store.delete("routers", ident)

    def router_interfaces(self, router_id: str) -> list[Row]:
        return self.store.list("ports", device_id=router_id, device_owner=ROUTER_INTERFACE)

    def add_router_interface(self, caller: Caller, ident: str, ref: Mapping[str, Any]) -> Row:
        """The interface document Neutron answers (id, port_id, subnet_id(s), project)."""
        router = self._find(caller, "routers", ident)
        subnet_id, port_id = _interface_ref(ref)
        if subnet_id and port_id:
            raise BadRequest(
                "Bad router request: Cannot specify both subnet-id and port-id.", "BadRequest"
            )
        held = {f["subnet_id"] for p in self.router_interfaces(ident) for f in p["fixed_ips"]}
        if port_id:
            port = self._find(caller, "ports", str(port_id))
            if port["device_id"] or port["device_owner"]:
                raise Conflict(f"Unable to complete operation on port {port_id} for network "
                               f"{port['network_id']}. Port already has an attached device "
                               f"{port['device_id']}.", "PortInUse")  # fmt: skip
            if not port["fixed_ips"]:
                raise BadRequest("Bad router request: Router port must have at least one "
                                 "fixed IP.", "BadRequest")  # fmt: skip
            for f in port["fixed_ips"]:
                if f["subnet_id"] in held:
                    raise BadRequest(f"Bad router request: Router already has a port on subnet "
                                     f"{f['subnet_id']}.", "BadRequest")  # fmt: skip
            port = self._updated("ports", port["id"], {
                "device_id": ident, "device_owner": ROUTER_INTERFACE, "status": "ACTIVE"})  # fmt: skip
        else:
            subnet = self._find(caller, "subnets", str(subnet_id))
            if not subnet["gateway_ip"]:
                raise BadRequest("Bad router request: Subnet for router interface must have a "
                                 "gateway IP.", "BadRequest")  # fmt: skip
            if subnet["id"] in held:
                raise BadRequest(f"Bad router request: Router already has a port on subnet "
                                 f"{subnet['id']}.", "BadRequest")  # fmt: skip
            network = self.store.get("networks", subnet["network_id"])
            assert network is not None
            new_port = new_id()
            # The gateway address: no port may take it but the router's interface.
            if not self.store.claim(network["id"], subnet["id"], subnet["gateway_ip"], new_port):
                raise Conflict(f"Unable to complete operation for network {network['id']}. The "
                               f"IP address {subnet['gateway_ip']} is in use.", "IpAddressInUse")  # fmt: skip
            fixed = [{"subnet_id": subnet["id"], "ip_address": subnet["gateway_ip"]}]
            port = self.store.insert("ports", {
                "id": new_port, "name": "", "project_id": router["project_id"],
                "description": "", "network_id": network["id"], "mac_address": random_mac(),
                "status": "ACTIVE", "device_id": ident, "device_owner": ROUTER_INTERFACE,
                "fixed_ips": fixed, "security_groups": [], "port_security_enabled": False,
            })  # fmt: skip
        return self._interface_info(router, port)

    def remove_router_interface(self, caller: Caller, ident: str, ref: Mapping[str, Any]) -> Row:
        router = self._find(caller, "routers", ident)
        subnet_id, port_id = _interface_ref(ref)
        ports = self.router_interfaces(ident)
        if port_id:
            port = next((p for p in ports if p["id"] == port_id), None)
            if port is None:
                raise NotFound(f"Router {ident} does not have an interface with id {port_id}",
                               "RouterInterfaceNotFound")  # fmt: skip
            if subnet_id and all(f["subnet_id"] != subnet_id for f in port["fixed_ips"]):
                raise Conflict(f"Subnet {subnet_id} is not associated with port {port_id}.",
                               "SubnetMismatchForPort")  # fmt: skip
        else:
            self._find(caller, "subnets", str(subnet_id))
            port = next((p for p in ports
                         if any(f["subnet_id"] == subnet_id for f in p["fixed_ips"])), None)  # fmt: skip
            if port is None:
                raise NotFound(f"Router {ident} has no interface on subnet {subnet_id}",
                               "RouterInterfaceNotFoundForSubnet")  # fmt: skip
        if router["gw_port_id"]:
            self._check_interface_unused(router, port)
        self._delete_port_row(port)
        return self._interface_info(router, port)

    def _check_interface_unused(self, router: Row, port: Row) -> None:
        subnets = {f["subnet_id"] for f in port["fixed_ips"]}
        for fip in self.store.list("floatingips", floating_network_id=router["gw_network_id"]):
            held = self.store.get("ports", fip["port_id"]) if fip["port_id"] else None
            if held and any(f["subnet_id"] in subnets for f in held["fixed_ips"]):
                subnet = next(iter(subnets))
                raise Conflict(f"Router interface for subnet {subnet} on router {router['id']} "
                               "cannot be deleted, as it is required by one or more floating "
                               "IPs.", "RouterInterfaceInUseByFloatingIP")  # fmt: skip

    def _interface_info(self, router: Row, port: Row) -> Row:
        subnets = [f["subnet_id"] for f in port["fixed_ips"]]
        return {"id": router["id"],
                "project_id": router["project_id"], "port_id": port["id"],
                "network_id": port["network_id"], "subnet_id": subnets[0] if subnets else None,
                "subnet_ids": subnets}  # fmt: skip

    # -- helpers ------------------------------------------------------------------------------

    def _updated(self, kind: str, ident: str, values: Mapping[str, Any]) -> Row:
        row = self.store.update(kind, ident, values) if values else self.store.get(kind, ident)
        if row is None:
            raise not_found(kind.rstrip("s").replace("floatingip", "floatingip"), ident)
        return row

    def ensure_network(self, project_id: str, private: Mapping[str, Any]) -> None:
        """The shared ``private`` network (the embedded flat network's id, name, CIDR, gateway
        and DNS servers) with its subnet, when it does not exist yet."""
        if self.store.get("networks", str(private["id"])) is not None:
            return
        try:
            self.store.insert("networks", {
                "id": private["id"], "name": private["name"], "project_id": project_id,
                "description": "", "shared": True, "external": False,
            })  # fmt: skip
        except sa.exc.IntegrityError:
            return  # another process made it
        self.create_subnet(Caller(project_id, True), {
            "network_id": private["id"], "name": f"{private['name']}-subnet",
            "cidr": private["cidr"],
            **({"gateway_ip": private["gateway"]} if private.get("gateway") else {}),
            "dns_nameservers": list(private.get("dns_nameservers") or []),
        })  # fmt: skip

    def bootstrap(self, project_id: str, private: Mapping[str, Any]) -> None:
        """The all-in-one's networks: ``private`` (shared: every project boots on it),
        ``public`` (external, for floating IPs, devstack's 172.24.4.0/24) and ``router1``
        between them (what makes a floating IP reach ``private``). Nothing changes when they
        exist."""
        self.ensure_network(project_id, private)
        admin = Caller(project_id, True)
        publics = self.store.list("networks", name="public", external=True)
        if not publics:
            public = self.create_network(
                admin, {"name": "public", "router:external": True, "is_default": True}
            )
            self.create_subnet(admin, {"network_id": public["id"], "name": "public-subnet",
                                       "cidr": "172.24.4.0/24"})  # fmt: skip
            publics = [public]
        elif self.default_external() is None:
            self._set_default_external(str(publics[0]["id"]), True)  # made before decision 0074
        if not self.store.list("routers", name="router1", project_id=project_id):
            router = self.create_router(admin, {
                "name": "router1", "external_gateway_info": {"network_id": publics[0]["id"]}})  # fmt: skip
            for subnet in self.store.list("subnets", network_id=str(private["id"])):
                self.add_router_interface(admin, router["id"], {"subnet_id": subnet["id"]})


def _same(field: str, stored: Any, wanted: Any) -> bool:
    """Two rules' field values match (prefixes compared as the networks they name)."""
    if field == "remote_ip_prefix" and stored and wanted:
        return bool(ipaddress.ip_network(stored, strict=False)
                    == ipaddress.ip_network(wanted, strict=False))  # fmt: skip
    return bool(stored == wanted)


def _address_in(text: str, cidr: ipaddress.IPv4Network | ipaddress.IPv6Network) -> Any:
    try:
        ip = ipaddress.ip_address(text)
    except ValueError as exc:
        raise InvalidInput(f"'{text}' is not a valid IP address") from exc
    if ip not in cidr:
        raise InvalidInput(f"IP address {text} is not in subnet {cidr}")
    return ip


def _default_pools(
    cidr: ipaddress.IPv4Network | ipaddress.IPv6Network, gateway: str | None
) -> list[dict[str, str]]:
    """Every host address but the gateway, as Neutron computes the default pools."""
    first, last = int(cidr.network_address) + 1, int(cidr.broadcast_address) - (cidr.version == 4)
    if cidr.version == 6:
        last = int(cidr.broadcast_address)
    pools, start = [], first
    gw = int(ipaddress.ip_address(gateway)) if gateway else None
    if gw is not None and first <= gw <= last:
        if gw > first:
            pools.append((first, gw - 1))
        start = gw + 1
    if start <= last:
        pools.append((start, last))
    make = ipaddress.ip_address
    return [{"start": str(make(a)), "end": str(make(b))} for a, b in pools]


def _pool_addresses(subnet: Row) -> Iterator[str]:
    for pool in subnet["allocation_pools"]:
        start, end = (
            int(ipaddress.ip_address(pool["start"])),
            int(ipaddress.ip_address(pool["end"])),
        )
        for value in range(start, end + 1):
            yield str(ipaddress.ip_address(value))


def _normalized_rule(ref: Mapping[str, Any]) -> dict[str, Any]:
    """A rule's matching fields, checked as Neutron checks them."""
    direction = ref.get("direction")
    if direction not in ("ingress", "egress"):
        raise InvalidInput(f"{direction} is not in valid_values ['ingress', 'egress']".replace(
            "valid_values", "valid values"))  # fmt: skip
    ethertype = ref.get("ethertype") or "IPv4"
    if ethertype not in ("IPv4", "IPv6"):
        raise BadRequest(f"Security group rule for ethertype '{ethertype}' not supported. "
                         "Allowed values are ['IPv4', 'IPv6'].", "SecurityGroupRuleInvalidEtherType")  # fmt: skip
    protocol = ref.get("protocol")
    if protocol is not None:
        protocol = str(protocol).lower()
        if protocol in ("any", ""):
            protocol = None
        elif protocol not in PROTOCOLS and not (protocol.isdigit() and 0 <= int(protocol) <= 255):
            raise BadRequest(f"Security group rule protocol {protocol} not supported. Only "
                             "protocol values [None, 'ah', 'dccp', 'egp', 'esp', 'gre', 'icmp', "
                             "'icmpv6', 'igmp', 'ipip', 'ipv6-encap', 'ipv6-frag', 'ipv6-icmp', "
                             "'ipv6-nonxt', 'ipv6-opts', 'ipv6-route', 'ospf', 'pgm', 'rsvp', "
                             "'sctp', 'tcp', 'udp', 'udplite', 'vrrp'] and integer "
                             "representations [0 to 255] are supported.",
                             "SecurityGroupRuleInvalidProtocol")  # fmt: skip
    low, high = ref.get("port_range_min"), ref.get("port_range_max")
    if protocol in _PORT_PROTOCOLS:
        if (low is None) != (high is None) and low is not None and high is None:
            high = low
        if low is not None and high is not None and not 0 < int(low) <= int(high) <= 65535:
            raise BadRequest("For TCP/UDP protocols, port_range_min must be <= "
                                 "port_range_max", "SecurityGroupInvalidPortRange")  # fmt: skip
    elif protocol in _ICMP_PROTOCOLS:
        for value, name in ((low, "type"), (high, "code")):
            if value is not None and not 0 <= int(value) <= 255:
                raise BadRequest(f"Invalid value for ICMP {name} (port_range_min): {value}. It "
                                 "must be 0 to 255.", "SecurityGroupInvalidIcmpValue")  # fmt: skip
    elif low is not None or high is not None:
        raise BadRequest("Security group rule ports are only allowed for TCP, UDP, UDP-Lite, "
                         "SCTP and DCCP.", "SecurityGroupInvalidPortValue")  # fmt: skip
    prefix, remote_group = ref.get("remote_ip_prefix"), ref.get("remote_group_id")
    if prefix and remote_group:
        raise BadRequest("Only remote_ip_prefix or remote_group_id may be provided.",
                         "SecurityGroupRemoteGroupAndRemoteIpPrefix")  # fmt: skip
    if prefix:
        try:
            net = ipaddress.ip_network(str(prefix), strict=False)
        except ValueError as exc:
            raise InvalidInput(f"'{prefix}' is not a valid IP prefix") from exc
        if (net.version == 4) != (ethertype == "IPv4"):
            raise BadRequest(f"Conflicting value ethertype {ethertype} for CIDR {prefix}",
                             "SecurityGroupRuleParameterConflict")  # fmt: skip
        prefix = str(prefix)  # kept as given (Neutron's normalized_cidr is the network's)
    return {
        "direction": direction, "ethertype": ethertype, "protocol": protocol,
        "port_range_min": None if low is None else int(low),
        "port_range_max": None if high is None else int(high),
        "remote_ip_prefix": prefix or None, "remote_group_id": remote_group or None,
    }  # fmt: skip


def _interface_ref(ref: Mapping[str, Any]) -> tuple[Any, Any]:
    """An add/remove_router_interface body's ``subnet_id`` and ``port_id`` (Neutron's 400
    when it names neither)."""
    subnet_id, port_id = ref.get("subnet_id"), ref.get("port_id")
    if not subnet_id and not port_id:
        raise BadRequest(
            "Bad router request: Either subnet_id or port_id must be specified.", "BadRequest"
        )
    return subnet_id, port_id
