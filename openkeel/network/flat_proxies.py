"""What the embedded network adapter does for Nova's network proxies (``os-security-groups``,
``os-security-group-rules``, ``os-floating-ips``, ``os-floating-ip-pools``) and the fixed and
floating IP server actions: the embedded network service called as Nova calls Neutron (the
user's project, admin or not), its faults turned into the errors Nova makes of Neutron's.

Mixed into :class:`openkeel.network.flat.FlatNetwork`, which provides ``store``, ``service`` and
``default_pool``.
"""

from __future__ import annotations

from typing import Any, NoReturn

from openkeel.db.network_store import NetworkStore
from openkeel.network import errors, port_groups
from openkeel.network.adapter import (
    IngressRule,
    InstanceNetRef,
    NetworkAdapter,
    NetworkInfo,
    Requester,
)
from openkeel.network.embedded.faults import NetworkFault
from openkeel.network.embedded.service import Caller, NetworkService, Row
from openkeel.network.port_groups import neutron_rule, nova_rule

_GROUP_REFUSALS = (400, 409)


def _caller(caller: Requester) -> Caller:
    return Caller(caller.project_id, caller.is_admin)


def nova_group(service: NetworkService, group: Row) -> dict[str, Any]:
    """A Neutron group in Nova's form: its ingress rules only."""
    return port_groups.nova_group(group, service.rules_of(group["id"]))


class FlatProxies(NetworkAdapter):
    """The proxies' side of the embedded adapter."""

    store: NetworkStore
    service: NetworkService
    default_pool: str

    # --- security groups ----------------------------------------------------------------------

    def list_security_groups(self, caller: Requester, all_projects: bool) -> list[dict[str, Any]]:
        rows = self.service.visible(_caller(caller), "security_groups")
        if not (caller.is_admin and all_projects):
            rows = [r for r in rows if r["project_id"] == caller.project_id]
        return [nova_group(self.service, r) for r in rows]

    def get_security_group(self, caller: Requester, group_id: str) -> dict[str, Any]:
        try:
            return nova_group(self.service, self.service.show(_caller(caller), "security_groups",
                                                              group_id))  # fmt: skip
        except NetworkFault as fault:
            raise errors.SecurityGroupMissing(fault.message) from fault

    def create_security_group(
        self, caller: Requester, name: str, description: str
    ) -> dict[str, Any]:
        ref = {"name": name, "description": description}
        try:
            group = self.service.create_security_group(_caller(caller), ref)
        except NetworkFault as fault:
            if fault.status == 409:
                raise errors.SecurityGroupLimitExceeded(fault.message) from fault
            raise errors.SecurityGroupInvalid(fault.message) from fault
        return nova_group(self.service, group)

    def update_security_group(
        self, caller: Requester, group_id: str, name: str, description: str
    ) -> dict[str, Any]:
        ref = {"name": name, "description": description}
        try:
            group = self.service.update_security_group(_caller(caller), group_id, ref)
        except NetworkFault as fault:
            self._group_fault(fault)
        return nova_group(self.service, group)

    def delete_security_group(self, caller: Requester, group_id: str) -> None:
        try:
            self.service.delete_security_group(_caller(caller), group_id)
        except NetworkFault as fault:
            self._group_fault(fault)

    def _group_fault(self, fault: NetworkFault) -> NoReturn:
        """Neutron's 404 is Nova's SecurityGroupNotFound; its 400 and 409 Nova's Invalid."""
        if fault.status in _GROUP_REFUSALS:
            raise errors.SecurityGroupInvalid(fault.message) from fault
        if fault.status == 404:
            raise errors.SecurityGroupMissing(fault.message) from fault
        raise fault

    def get_security_group_rule(self, caller: Requester, rule_id: str) -> dict[str, Any]:
        try:
            rule = self.service.show(_caller(caller), "security_group_rules", rule_id)
        except NetworkFault as fault:
            raise errors.SecurityGroupMissing(fault.message) from fault
        return nova_rule(rule)

    def create_security_group_rule(self, caller: Requester, rule: IngressRule) -> dict[str, Any]:
        try:
            made = self.service.create_rule(_caller(caller), neutron_rule(rule))
        except NetworkFault as fault:
            if fault.status == 409:
                raise errors.SecurityGroupLimitExceeded(fault.message) from fault
            self._group_fault(fault)
        return nova_rule(made)

    def delete_security_group_rule(self, caller: Requester, rule_id: str) -> None:
        try:
            self.service.delete_rule(_caller(caller), rule_id)
        except NetworkFault as fault:
            self._group_fault(fault)

    # --- floating IPs -----------------------------------------------------------------------

    def list_floating_ip_pools(self, caller: Requester) -> list[dict[str, Any]]:
        return [{"id": n["id"], "name": n["name"]}
                for n in self.store.list("networks", external=True)]  # fmt: skip

    def _floating_doc(self, fip: Row) -> dict[str, Any]:
        network = self.store.get("networks", fip["floating_network_id"])
        port = self.store.get("ports", fip["port_id"]) if fip["port_id"] else None
        return {
            "id": fip["id"], "floating_ip_address": fip["floating_ip_address"],
            "fixed_ip_address": fip["fixed_ip_address"], "port_id": fip["port_id"],
            "floating_network_id": fip["floating_network_id"],
            "instance_id": port["device_id"] if port is not None else None,
            "pool": (network["name"] or network["id"]) if network else fip["floating_network_id"],
        }  # fmt: skip

    def list_floating_ips(self, caller: Requester) -> list[dict[str, Any]]:
        rows = self.store.list("floatingips", project_id=caller.project_id)
        return [self._floating_doc(r) for r in rows]

    def get_floating_ip(self, caller: Requester, floating_ip_id: str) -> dict[str, Any]:
        try:
            fip = self.service.show(_caller(caller), "floatingips", floating_ip_id)
        except NetworkFault as fault:
            raise errors.FloatingIpNotFound(floating_ip_id) from fault
        return self._floating_doc(fip)

    def _by_address(self, caller: Requester, address: str) -> Row:
        rows = [r for r in self.store.list("floatingips", floating_ip_address=address)
                if caller.is_admin or r["project_id"] == caller.project_id]  # fmt: skip
        if not rows:
            raise errors.FloatingIpNotFoundForAddress(address)
        return rows[0]

    def get_floating_ip_by_address(self, caller: Requester, address: str) -> dict[str, Any]:
        return self._floating_doc(self._by_address(caller, address))

    def _pool(self, name_or_id: str) -> Row:
        pools = [n for n in self.store.list("networks", external=True)
                 if name_or_id in (n["id"], n["name"])]  # fmt: skip
        if not pools:
            raise errors.FloatingIpPoolNotFound()
        if len(pools) > 1:
            raise errors.FloatingIpBadRequest(
                f"Multiple floating IP pools matches found for name '{name_or_id}'"
            )
        return pools[0]

    def allocate_floating_ip(self, caller: Requester, pool: str | None) -> dict[str, Any]:
        network = self._pool(pool or self.default_pool)
        try:
            fip = self.service.create_floating_ip(
                _caller(caller), {"floating_network_id": network["id"]}
            )
        except NetworkFault as fault:
            refused = errors.floating_ip_refused(fault.kind, fault.status, fault.message)
            if refused is None:
                raise
            raise refused from fault
        return self._floating_doc(fip)

    def release_floating_ip(self, caller: Requester, address: str) -> None:
        fip = self._by_address(caller, address)
        try:
            self.service.delete_floating_ip(_caller(caller), fip["id"])
        except NetworkFault as fault:
            raise errors.FloatingIpNotFoundForAddress(address) from fault

    def associate_floating_ip(
        self, caller: Requester, instance_uuid: str, address: str, fixed_address: str
    ) -> None:
        port = next((p for p in self.store.list("ports", device_id=instance_uuid)
                     if any(f["ip_address"] == fixed_address for f in p["fixed_ips"])), None)  # fmt: skip
        fip = self._by_address(caller, address)
        if port is None:
            raise errors.FixedIpNotFoundForInstance(instance_uuid, fixed_address)
        ref = {"port_id": port["id"], "fixed_ip_address": fixed_address}
        try:
            self.service.update_floating_ip(_caller(caller), fip["id"], ref)
        except NetworkFault as fault:
            if fault.status == 409:
                raise errors.FloatingIpAssociateFailed(fault.message) from fault
            raise

    def disassociate_floating_ip(self, caller: Requester, address: str) -> None:
        fip = self._by_address(caller, address)
        self.service.update_floating_ip(_caller(caller), fip["id"], {"port_id": None})

    # --- fixed IPs on a server's ports ----------------------------------------------------------

    def add_fixed_ip(self, instance: InstanceNetRef, network_id: str) -> NetworkInfo:
        admin = Caller(instance.project_id, True)
        subnets = self.store.list("subnets", network_id=network_id)
        ports = self.store.list("ports", device_id=instance.uuid, network_id=network_id)
        for port in ports:
            for subnet in subnets:
                wanted = [*port["fixed_ips"], {"subnet_id": subnet["id"]}]
                try:
                    self.service.update_port(admin, port["id"], {"fixed_ips": wanted})
                except NetworkFault:
                    continue  # Nova tries the next subnet, then the next port
                return self.get_instance_nw_info(instance)
        raise errors.NetworkNotFoundForInstance(instance.uuid)

    def remove_fixed_ip(self, instance: InstanceNetRef, address: str) -> NetworkInfo:
        admin = Caller(instance.project_id, True)
        for port in self.store.list("ports", device_id=instance.uuid):
            if any(f["ip_address"] == address for f in port["fixed_ips"]):
                left = [f for f in port["fixed_ips"] if f["ip_address"] != address]
                self.service.update_port(admin, port["id"], {"fixed_ips": left})
                return self.get_instance_nw_info(instance)
        raise errors.FixedIpNotFoundForInstance(instance.uuid, address)
