"""What the Neutron adapter does for Nova's network proxies (``os-security-groups``,
``os-security-group-rules``, ``os-floating-ips``, ``os-floating-ip-pools``) and the fixed and
floating IP server actions, with Nova 34.0.0's behaviour (decisions 0055, 0064).

Nova makes these calls with the user's token; the adapter's calls are the ``[neutron]`` service
user's, so what the ``Requester`` may see is filtered here as Neutron filters for a token of
that project (its own groups, rules and floating IPs; everything for an admin) and what it makes
belongs to its project (a rule: to its group's project). Neutron's documents are converted as
Nova converts them (groups with their ingress rules; floating IPs with the port's device as
``instance_id`` and the external network's name as ``pool``); Neutron's refusals become the
``openkeel.network.errors`` named after the exceptions Nova raises for them.

Mixed into :class:`openkeel.network.neutron.NeutronNetwork`, which provides ``client`` and
``default_pool`` (``[neutron] default_floating_pool``).
"""

from __future__ import annotations

import logging
import uuid
from typing import Any, NoReturn

from openkeel.network import errors, port_groups
from openkeel.network.adapter import (
    IngressRule,
    InstanceNetRef,
    NetworkAdapter,
    NetworkInfo,
    Requester,
)
from openkeel.network.neutron_client import Doc, NeutronClient, NeutronFault

LOG = logging.getLogger(__name__)


def _sees(caller: Requester, doc: Doc) -> bool:
    """What a token of the caller's project shows: its own resources, or all for an admin."""
    return caller.is_admin or doc.get("project_id") == caller.project_id


def _nova_group(group: Doc) -> dict[str, Any]:
    return port_groups.nova_group(group, group.get("security_group_rules") or ())


def _group_fault(fault: NeutronFault) -> NoReturn:
    """Neutron's 404 is Nova's SecurityGroupNotFound; its 400 and 409 (bad input, a group in
    use, the ``default`` group renamed) Nova's Invalid; anything else is Neutron's error."""
    if fault.status == 404:
        raise errors.SecurityGroupMissing(fault.message) from fault
    if fault.status in (400, 409):
        raise errors.SecurityGroupInvalid(fault.message) from fault
    raise fault


def _is_uuid(text: str) -> bool:
    try:
        uuid.UUID(text)
    except ValueError:
        return False
    return True


class NeutronProxies(NetworkAdapter):
    """The proxies' side of the Neutron adapter."""

    client: NeutronClient
    default_pool: str

    # --- security groups -------------------------------------------------------------------

    def list_security_groups(self, caller: Requester, all_projects: bool) -> list[dict[str, Any]]:
        # Nova passes the project unless an admin asks for all of them; Neutron then lists
        # every project's groups (and makes the project's default group on the way).
        query = {} if caller.is_admin and all_projects else {"project_id": caller.project_id}
        return [_nova_group(g) for g in self.client.list("security-groups", query)]

    def _group(self, caller: Requester, group_id: str) -> Doc:
        try:
            group = self.client.show("security-groups", group_id)
        except NeutronFault as fault:
            _group_fault(fault)
        if not _sees(caller, group):
            raise errors.SecurityGroupMissing(f"Security group {group_id} does not exist")
        return group

    def get_security_group(self, caller: Requester, group_id: str) -> dict[str, Any]:
        return _nova_group(self._group(caller, group_id))

    def create_security_group(
        self, caller: Requester, name: str, description: str
    ) -> dict[str, Any]:
        body = {"name": name, "description": description, "project_id": caller.project_id}
        try:
            group = self.client.create("security-groups", body)
        except NeutronFault as fault:
            if fault.status == 409:  # over quota, a second ``default``
                raise errors.SecurityGroupLimitExceeded(fault.message) from fault
            _group_fault(fault)
        return _nova_group(group)

    def update_security_group(
        self, caller: Requester, group_id: str, name: str, description: str
    ) -> dict[str, Any]:
        self._group(caller, group_id)
        try:
            group = self.client.update("security-groups", group_id,
                                       {"name": name, "description": description})  # fmt: skip
        except NeutronFault as fault:
            _group_fault(fault)
        return _nova_group(group)

    def delete_security_group(self, caller: Requester, group_id: str) -> None:
        if self._group(caller, group_id)["name"] == "default" and not caller.is_admin:
            # Neutron's 409 for a project's token (the adapter's admin token may), Nova's 400
            raise errors.SecurityGroupInvalid(
                "Insufficient rights for removing default security group."
            )
        try:
            self.client.delete("security-groups", group_id)
        except NeutronFault as fault:
            _group_fault(fault)

    def _rule(self, caller: Requester, rule_id: str) -> Doc:
        try:
            rule = self.client.show("security-group-rules", rule_id)
        except NeutronFault as fault:
            _group_fault(fault)
        if not _sees(caller, rule):
            # a rule of the caller's group made by someone else is still the caller's to see
            self._group(caller, str(rule["security_group_id"]))
        return rule

    def get_security_group_rule(self, caller: Requester, rule_id: str) -> dict[str, Any]:
        return port_groups.nova_rule(self._rule(caller, rule_id))

    def create_security_group_rule(self, caller: Requester, rule: IngressRule) -> dict[str, Any]:
        group = self._group(caller, rule.parent_group_id)
        if rule.group_id is not None:
            self._group(caller, rule.group_id)
        body = {**port_groups.neutron_rule(rule), "project_id": group["project_id"]}
        try:
            made = self.client.create("security-group-rules", body)
        except NeutronFault as fault:
            if fault.status == 409:  # over quota, or Neutron's own duplicate
                raise errors.SecurityGroupLimitExceeded(fault.message) from fault
            _group_fault(fault)
        return port_groups.nova_rule(made)

    def delete_security_group_rule(self, caller: Requester, rule_id: str) -> None:
        self._rule(caller, rule_id)
        try:
            self.client.delete("security-group-rules", rule_id)
        except NeutronFault as fault:
            _group_fault(fault)

    # --- floating IPs ----------------------------------------------------------------------

    def list_floating_ip_pools(self, caller: Requester) -> list[dict[str, Any]]:
        pools = self.client.list("networks", {"router:external": True})
        return [{"id": n["id"], "name": n["name"]} for n in pools]

    def _floating_docs(self, fips: list[Doc]) -> list[dict[str, Any]]:
        """Nova's view of Neutron's floating IPs: the device of the port (Neutron's
        ``port_details``, else the port itself) and the external network's name, else id."""
        if not fips:
            return []
        net_ids = sorted({str(f["floating_network_id"]) for f in fips})
        names = {n["id"]: n["name"] or n["id"] for n in self.client.list(
            "networks", {"id": net_ids, "fields": ["id", "name"]})}  # fmt: skip
        return [self._floating_doc(f, names) for f in fips]

    def _floating_doc(self, fip: Doc, pools: dict[str, str]) -> dict[str, Any]:
        keys = ("id", "floating_ip_address", "fixed_ip_address", "port_id", "floating_network_id")
        doc: dict[str, Any] = {key: fip.get(key) for key in keys}
        doc["instance_id"] = self._device(fip)
        doc["pool"] = pools.get(fip["floating_network_id"])
        return doc

    def _device(self, fip: Doc) -> str | None:
        if not fip.get("port_id"):
            return None
        if "port_details" in fip:
            details = fip["port_details"] or {}
        else:  # a Neutron without the fip-port-details extension
            try:
                details = self.client.show("ports", str(fip["port_id"]))
            except NeutronFault as fault:
                if fault.status != 404:
                    raise
                details = {}  # the port went while we looked (as Nova, no device)
        return str(details.get("device_id") or "") or None

    def _floating_ips(self, query: dict[str, Any]) -> list[Doc]:
        """Neutron's floating IPs; none when Neutron has no L3 API (Nova's 404 handling)."""
        try:
            return self.client.list("floatingips", query)
        except NeutronFault as fault:
            if fault.status == 404:
                return []
            raise

    def list_floating_ips(self, caller: Requester) -> list[dict[str, Any]]:
        return self._floating_docs(self._floating_ips({"project_id": caller.project_id}))

    def get_floating_ip(self, caller: Requester, floating_ip_id: str) -> dict[str, Any]:
        try:
            fip = self.client.show("floatingips", floating_ip_id)
        except NeutronFault as fault:
            if fault.status in (400, 404):
                raise errors.FloatingIpNotFound(floating_ip_id) from fault
            raise
        if not _sees(caller, fip):
            raise errors.FloatingIpNotFound(floating_ip_id)
        return self._floating_docs([fip])[0]

    def _by_address(self, caller: Requester, address: str) -> Doc:
        query: dict[str, Any] = {"floating_ip_address": address}
        if not caller.is_admin:
            query["project_id"] = caller.project_id
        fips = self._floating_ips(query) if address else []
        if not fips:
            raise errors.FloatingIpNotFoundForAddress(address)
        if len(fips) > 1:  # overlapping external networks: Nova cannot tell them apart either
            raise errors.FloatingIpBadRequest(
                f"Multiple floating IPs are found for address {address}."
            )
        return fips[0]

    def get_floating_ip_by_address(self, caller: Requester, address: str) -> dict[str, Any]:
        return self._floating_docs([self._by_address(caller, address)])[0]

    def _pool(self, name_or_id: str) -> str:
        """The id of the external network ``name_or_id`` (a UUID is an id, else a name)."""
        query: dict[str, Any] = {"router:external": True, "fields": "id"}
        query["id" if _is_uuid(name_or_id) else "name"] = name_or_id
        pools = self.client.list("networks", query)
        if not pools:
            raise errors.FloatingIpPoolNotFound()
        if len(pools) > 1:
            raise errors.FloatingIpBadRequest(
                f"Multiple floating IP pools matches found for name '{name_or_id}'"
            )
        return str(pools[0]["id"])

    def allocate_floating_ip(self, caller: Requester, pool: str | None) -> dict[str, Any]:
        body = {"floating_network_id": self._pool(pool or self.default_pool),
                "project_id": caller.project_id}  # fmt: skip
        try:
            fip = self.client.create("floatingips", body)
        except NeutronFault as fault:
            refused = errors.floating_ip_refused(fault.kind, fault.status, fault.message)
            if refused is None:
                raise
            raise refused from fault
        return self._floating_docs([fip])[0]

    def release_floating_ip(self, caller: Requester, address: str) -> None:
        fip = self._by_address(caller, address)
        try:
            self.client.delete("floatingips", str(fip["id"]))
        except NeutronFault as fault:
            if fault.status == 404:
                raise errors.FloatingIpNotFoundForAddress(address) from fault
            raise

    def associate_floating_ip(
        self, caller: Requester, instance_uuid: str, address: str, fixed_address: str
    ) -> None:
        ports = self.client.list("ports", {"device_id": instance_uuid,
                                           "fixed_ips": f"ip_address={fixed_address}"})  # fmt: skip
        if not ports:
            raise errors.FixedIpNotFoundForInstance(instance_uuid, fixed_address)
        fip = self._by_address(caller, address)
        change = {"port_id": ports[0]["id"], "fixed_ip_address": fixed_address}
        try:
            self.client.update("floatingips", str(fip["id"]), change)
        except NeutronFault as fault:
            if fault.status == 409:
                raise errors.FloatingIpAssociateFailed(fault.message) from fault
            raise  # e.g. no router from the port's subnet to the pool: Nova's generic 400

    def disassociate_floating_ip(self, caller: Requester, address: str) -> None:
        fip = self._by_address(caller, address)
        self.client.update("floatingips", str(fip["id"]), {"port_id": None})

    # --- fixed IPs on a server's ports -----------------------------------------------------

    def add_fixed_ip(self, instance: InstanceNetRef, network_id: str) -> NetworkInfo:
        subnets = self.client.list("subnets", {"network_id": network_id, "fields": "id"})
        if subnets:
            ports = self.client.list("ports", {"device_id": instance.uuid,
                                               "network_id": network_id})  # fmt: skip
            for port in ports:
                for subnet in subnets:
                    wanted = [*port["fixed_ips"], {"subnet_id": subnet["id"]}]
                    try:
                        self.client.update("ports", port["id"], {"fixed_ips": wanted})
                    except NeutronFault as fault:  # Nova tries the next subnet, then port
                        LOG.debug("port %s takes no address of subnet %s: %s",
                                  port["id"], subnet["id"], fault.message)  # fmt: skip
                        continue
                    return self.get_instance_nw_info(instance)
        raise errors.NetworkNotFoundForInstance(instance.uuid)

    def remove_fixed_ip(self, instance: InstanceNetRef, address: str) -> NetworkInfo:
        ports = self.client.list("ports", {"device_id": instance.uuid,
                                           "fixed_ips": f"ip_address={address}"})  # fmt: skip
        if not ports:
            raise errors.FixedIpNotFoundForInstance(instance.uuid, address)
        port = ports[0]
        left = [f for f in port["fixed_ips"] if f["ip_address"] != address]
        try:
            self.client.update("ports", port["id"], {"fixed_ips": left})
        except NeutronFault as fault:  # as Nova: logged, the network info read again
            LOG.warning("port %s keeps %s: %s", port["id"], address, fault.message)
        return self.get_instance_nw_info(instance)
