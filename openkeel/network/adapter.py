"""The network adapter interface compute and the servers API use, and the request value type.

``network_info`` follows Nova's network model (nova.network.model.NetworkInfo as JSON): one dict
per VIF with ``id`` (port id), ``address`` (MAC), ``network`` (id, label, subnets with ips and
floating_ips, gateway, dns), ``type``, ``devname``, ``active``, ``vnic_type`` ... It is stored in
``instance_info_caches.network_info`` and rendered by the servers API as ``addresses``.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from openkeel.domain.resource_requests import PortRequests, binding_allocation

# network_info: a list of VIF dicts (Nova's network model, JSON-able)
NetworkInfo = list[dict[str, Any]]

AUTO = "auto"
NONE = "none"


@dataclass(frozen=True)
class RequestedNetwork:
    """One entry of the create request's ``networks`` (Nova's NetworkRequest)."""

    network_id: str | None = None
    address: str | None = None
    port_id: str | None = None
    tag: str | None = None

    @classmethod
    def from_primitive(cls, data: Mapping[str, Any]) -> RequestedNetwork:
        """From the wire form (Nova's NetworkRequest field names; ``fixed_ip`` accepted too)."""
        return cls(
            network_id=data.get("network_id") or data.get("uuid"),
            address=data.get("address") or data.get("fixed_ip"),
            port_id=data.get("port_id") or data.get("port"),
            tag=data.get("tag"),
        )

    def to_primitive(self) -> dict[str, Any]:
        return {
            "network_id": self.network_id,
            "address": self.address,
            "port_id": self.port_id,
            "tag": self.tag,
        }

    @property
    def is_auto(self) -> bool:
        return self.network_id == AUTO

    @property
    def is_none(self) -> bool:
        return self.network_id == NONE


def parse_requested(
    requested: Sequence[RequestedNetwork | Mapping[str, Any]] | None,
) -> list[RequestedNetwork]:
    """Normalize a requested-networks argument (None: no explicit request)."""
    return [
        item if isinstance(item, RequestedNetwork) else RequestedNetwork.from_primitive(item)
        for item in requested or ()
    ]


@dataclass(frozen=True)
class InstanceNetRef:
    """What the adapters need to know about the instance."""

    uuid: str
    project_id: str
    host: str | None = None
    # The server's security groups by name or id (its ports get them; "default" is the
    # project's default group).
    security_groups: tuple[str, ...] = ()
    # Request group (port id, or extended group id) -> resource providers of the server's
    # allocation on ``host``: ports with a resource request get ``binding:profile.allocation``
    # when bound (decision 0076). None: not known, the profile's allocation is left alone.
    provider_mapping: Mapping[str, tuple[str, ...]] | None = None


def profile_with_allocation(
    instance: InstanceNetRef, port_id: str, resource_request: Any, profile: Any
) -> dict[str, Any] | None:
    """The port's ``binding:profile`` with the allocation of its resource request on the
    instance's host (Nova's ``_get_binding_profile_allocation``); None: nothing to change (no
    resource request, or no mapping known)."""
    if not resource_request or instance.provider_mapping is None:
        return None
    allocation = binding_allocation(port_id, resource_request, instance.provider_mapping)
    return {**(profile or {}), "allocation": allocation}


@dataclass(frozen=True)
class Requester:
    """Who asks through Nova's network proxies (os-security-groups, os-floating-ips ...): Nova
    calls Neutron with the user's token, so the project and whether Neutron sees an admin."""

    project_id: str
    is_admin: bool = False


@dataclass(frozen=True)
class IngressRule:
    """A rule added through ``os-security-group-rules``, as Nova's API has checked it: every
    Nova rule is ingress; ``from_port``/``to_port`` -1 mean no port (ICMP's any type/code);
    either ``cidr`` or ``group_id`` (a remote group) names the source."""

    parent_group_id: str
    protocol: str | None = None
    from_port: int | None = None
    to_port: int | None = None
    cidr: str | None = None
    group_id: str | None = None


class NetworkAdapter(abc.ABC):
    """Ports and addresses for instances."""

    name = "abstract"
    # True when the backend reports a port plugged (``network-vif-plugged`` through
    # os-server-external-events) once its VIF is up: compute then waits for it after plugging
    # (``[DEFAULT] vif_plugging_timeout`` / ``vif_plugging_is_fatal``).
    sends_vif_plugged_events = False

    @abc.abstractmethod
    def validate_networks(
        self, requested: Sequence[RequestedNetwork], max_count: int, project_id: str | None = None
    ) -> int:
        """Check a create request's networks; return how many instances can be created.

        Raises a ``NetworkError`` (400 in the API) for unknown networks/ports, bad or used
        fixed IPs, or a fixed IP requested for more than one instance. ``project_id`` is the
        caller's project (None for an admin): what belongs to other projects is not shown.
        """

    def find_security_group(self, project_id: str, name_or_id: str) -> str:
        """The id of the project's security group ``name_or_id`` (Nova's ``validate_name``),
        else ``SecurityGroupNotFound`` (400 in the API). ``default`` is never looked up: Nova
        passes it through. The embedded adapters have no other group, so none is found."""
        from openkeel.network import errors

        raise errors.SecurityGroupNotFound(name_or_id)

    def instance_security_groups(self, instance_uuid: str) -> list[dict[str, Any]]:
        """The security groups on the server's ports, in Nova's format (``id``, ``name``,
        ``description``, ``project_id``, ``rules``: the ingress rules with ``protocol``,
        ``from_port``, ``to_port``, ``cidr``, ``group_id``, ``parent_group_id``), one entry per
        port and group as Nova lists them. None without ports."""
        return []

    def port_security_groups(self, instance_uuid: str) -> dict[str, Any]:
        """What a hypervisor enforcing the groups itself needs (the KubeVirt driver's
        NetworkPolicies, decision 0077): ``ports`` (port id -> its group ids, none for a port
        without port security) and ``groups`` (group id -> Neutron's document: ``id``, ``name``,
        ``security_group_rules`` with ``direction``, ``ethertype``, ``protocol``,
        ``port_range_min``/``max``, ``remote_ip_prefix``, ``remote_group_id``). Both empty
        without ports."""
        return {"ports": {}, "groups": {}}

    def security_group_members(self, group_id: str) -> list[str]:
        """The servers (device ids of compute ports) whose ports have the group: the sources a
        rule naming it as remote group lets in."""
        return []

    def add_security_group(self, instance_uuid: str, project_id: str, name: str) -> None:
        """Add the project's group ``name`` (or id) to every port of the server (Nova's
        ``add_to_instance``)."""
        from openkeel.network import errors

        raise errors.InstanceSecurityGroupNotFound(
            f"instance_id {instance_uuid} could not be found as device id on any ports"
        )

    def remove_security_group(self, instance_uuid: str, project_id: str, name: str) -> None:
        """Remove the group from the server's ports (404 when none has it)."""
        self.add_security_group(instance_uuid, project_id, name)

    def list_networks(self, project_id: str | None) -> list[dict[str, Any]]:
        """The networks a project may see (``id``, ``name``): its own, shared and external
        ones; every one for an admin (``project_id`` None)."""
        return []

    def get_network(self, project_id: str | None, network_id: str) -> dict[str, Any]:
        """One visible network (NetworkNotFound)."""
        from openkeel.network import errors

        raise errors.NetworkNotFound(network_id)

    # --- the proxies of 2.1-2.35 and the floating/fixed IP actions of 2.1-2.43 ------------------
    # Security groups are in Nova's format (see ``instance_security_groups``); floating IPs are
    # Neutron's documents (``id``, ``floating_ip_address``, ``fixed_ip_address``, ``port_id``,
    # ``floating_network_id``) plus ``instance_id`` (the port's device) and ``pool`` (the
    # network's name, else id). Errors: the ``openkeel.network.errors`` named after Nova's.

    def list_security_groups(self, caller: Requester, all_projects: bool) -> list[dict[str, Any]]:
        """The caller's project's groups; every project's for an admin asking ``all_projects``."""
        return []

    def get_security_group(self, caller: Requester, group_id: str) -> dict[str, Any]:
        """One group the caller may see (SecurityGroupNotFound)."""
        from openkeel.network import errors

        raise errors.SecurityGroupMissing(f"Security group {group_id} does not exist")

    def create_security_group(
        self, caller: Requester, name: str, description: str
    ) -> dict[str, Any]:
        """A new group of the caller's project (SecurityGroupInvalid, SecurityGroupLimitExceeded
        for Neutron's conflicts: over quota, a second ``default``)."""
        from openkeel.network import errors

        raise errors.SecurityGroupInvalid("Security groups are not available.")

    def update_security_group(
        self, caller: Requester, group_id: str, name: str, description: str
    ) -> dict[str, Any]:
        """Rename/redescribe a group (SecurityGroupMissing, SecurityGroupInvalid)."""
        return self.get_security_group(caller, group_id)

    def delete_security_group(self, caller: Requester, group_id: str) -> None:
        """Delete a group (SecurityGroupMissing; SecurityGroupInvalid while ports use it)."""
        self.get_security_group(caller, group_id)

    def get_security_group_rule(self, caller: Requester, rule_id: str) -> dict[str, Any]:
        """One rule in Nova's format (SecurityGroupMissing)."""
        from openkeel.network import errors

        raise errors.SecurityGroupMissing(f"Security group rule {rule_id} does not exist")

    def create_security_group_rule(self, caller: Requester, rule: IngressRule) -> dict[str, Any]:
        """Add an ingress rule; the new rule in Nova's format (SecurityGroupMissing,
        SecurityGroupInvalid for what Neutron refuses, SecurityGroupLimitExceeded)."""
        return self.get_security_group(caller, rule.parent_group_id)

    def delete_security_group_rule(self, caller: Requester, rule_id: str) -> None:
        """Delete a rule (SecurityGroupMissing)."""
        self.get_security_group_rule(caller, rule_id)

    def list_floating_ip_pools(self, caller: Requester) -> list[dict[str, Any]]:
        """The external networks (``id``, ``name``): Nova's floating IP pools."""
        return []

    def list_floating_ips(self, caller: Requester) -> list[dict[str, Any]]:
        """The floating IPs of the caller's project."""
        return []

    def get_floating_ip(self, caller: Requester, floating_ip_id: str) -> dict[str, Any]:
        """One floating IP by id (FloatingIpNotFound)."""
        from openkeel.network import errors

        raise errors.FloatingIpNotFound(floating_ip_id)

    def get_floating_ip_by_address(self, caller: Requester, address: str) -> dict[str, Any]:
        """One floating IP by address (FloatingIpNotFoundForAddress)."""
        from openkeel.network import errors

        raise errors.FloatingIpNotFoundForAddress(address)

    def allocate_floating_ip(self, caller: Requester, pool: str | None) -> dict[str, Any]:
        """A new floating IP from ``pool`` (name or id; None: the default pool)
        (FloatingIpPoolNotFound, NoMoreFloatingIps, FloatingIpLimitExceeded,
        FloatingIpBadRequest)."""
        from openkeel.network import errors

        raise errors.FloatingIpPoolNotFound()

    def release_floating_ip(self, caller: Requester, address: str) -> None:
        """Delete a floating IP, associated or not (FloatingIpNotFoundForAddress)."""
        self.get_floating_ip_by_address(caller, address)

    def associate_floating_ip(
        self, caller: Requester, instance_uuid: str, address: str, fixed_address: str
    ) -> None:
        """Point the floating IP ``address`` at the server's port holding ``fixed_address``,
        taking it from whatever it pointed at (FloatingIpNotFoundForAddress,
        FloatingIpAssociateFailed when Neutron refuses)."""
        self.get_floating_ip_by_address(caller, address)

    def disassociate_floating_ip(self, caller: Requester, address: str) -> None:
        """Detach the floating IP from its port (FloatingIpNotFoundForAddress)."""
        self.get_floating_ip_by_address(caller, address)

    def add_fixed_ip(self, instance: InstanceNetRef, network_id: str) -> NetworkInfo:
        """One more address from ``network_id``'s subnets on the server's port on that network;
        the new network_info (NetworkNotFoundForInstance)."""
        from openkeel.network import errors

        raise errors.NetworkNotFoundForInstance(instance.uuid)

    def remove_fixed_ip(self, instance: InstanceNetRef, address: str) -> NetworkInfo:
        """Take ``address`` off the server's port holding it; the new network_info
        (FixedIpNotFoundForInstance)."""
        from openkeel.network import errors

        raise errors.FixedIpNotFoundForInstance(instance.uuid, address)

    def instance_ports(self, instance_uuid: str) -> list[dict[str, Any]]:
        """The server's ports (Neutron's port documents plus ``tag``), oldest first."""
        return []

    def show_port(self, port_id: str) -> dict[str, Any]:
        """One port (PortNotFound)."""
        from openkeel.network import errors

        raise errors.PortNotFound(port_id)

    def attach_port(self, instance: InstanceNetRef, requested: RequestedNetwork) -> dict[str, Any]:
        """One more port for the server (created on ``network_id``, or the given port bound);
        its VIF. The caller plugs it into the guest, or ``release_port``s it."""
        from openkeel.network import errors

        raise errors.InterfaceAttachFailedNoNetwork(instance.project_id)

    def release_port(self, instance: InstanceNetRef, port_id: str) -> None:
        """Give one port back: deleted when compute made it, else unbound."""
        return None

    def set_port_addresses(self, port_id: str, addresses: Sequence[str]) -> None:
        """Make ``addresses`` the port's fixed IPs: the hypervisor's network gave the guest
        these (KubeVirt's pod network), so the port follows what the guest really has.
        ``NetworkError`` when the network refuses them (not in a subnet, taken)."""
        from openkeel.network import errors

        raise errors.PortNotFound(port_id)

    def port_resource_requests(self, requested: Sequence[RequestedNetwork]) -> PortRequests:
        """The request groups of the requested ports' ``resource_request`` (QoS minimum
        bandwidth / packet rate), for the scheduler (Nova's ``create_resource_requests``: only
        ports given by the user; ports compute creates are not scheduled)."""
        return PortRequests()

    @abc.abstractmethod
    def allocate_for_instance(
        self, instance: InstanceNetRef, requested: Sequence[RequestedNetwork]
    ) -> NetworkInfo:
        """Create/bind the instance's ports and return its network_info.

        Idempotent: a second call for the same instance returns the existing allocation.
        """

    def bind_to_host(self, instance: InstanceNetRef) -> NetworkInfo:
        """Bind the server's ports to ``instance.host`` (a move's destination; None: unbind,
        a shelve-offload) and return its network_info."""
        return self.get_instance_nw_info(instance)

    # --- multiple port bindings (Neutron's ``binding-extended``): live migration (0072) ----

    def bind_ports_to_host(self, instance: InstanceNetRef, host: str) -> dict[str, Any] | None:
        """A second, INACTIVE binding on ``host`` (a live migration's destination) for each
        of the server's ports, beside their active one; their bindings by port id. A port no
        driver binds there: the bindings made are deleted and ``PortBindingFailed`` raised.
        None when the backend has no multiple bindings: the move re-binds (``bind_to_host``)."""
        return None

    def activate_port_bindings(self, instance: InstanceNetRef, host: str) -> None:
        """Activate the ports' bindings on ``host`` (the one that was active becomes
        inactive); a port without a binding there is left alone (Nova's
        ``migrate_instance_start``). ``PortBindingActivationFailed`` when refused."""
        return None

    def delete_port_bindings(self, instance: InstanceNetRef, host: str) -> None:
        """Delete the ports' (inactive) bindings on ``host``: a rolled-back destination, or
        the source after a live migration; none there is nothing to do.
        ``PortBindingDeletionFailed`` naming the ports whose binding could not be deleted."""
        return None

    def close(self) -> None:
        """Release the adapter's connections (a backend over HTTP)."""
        return None

    @abc.abstractmethod
    def deallocate_for_instance(self, instance: InstanceNetRef) -> None:
        """Release everything allocated for the instance (no-op when nothing is)."""

    @abc.abstractmethod
    def get_instance_nw_info(self, instance: InstanceNetRef) -> NetworkInfo:
        """The instance's current network_info (empty when it has none)."""


class NoNetwork(NetworkAdapter):
    """``backend = none``: instances have no network; only ``none``/``auto`` may be asked."""

    name = "none"

    def validate_networks(
        self, requested: Sequence[RequestedNetwork], max_count: int, project_id: str | None = None
    ) -> int:
        from openkeel.network import errors

        for item in requested:
            if item.port_id:
                raise errors.PortNotFound(item.port_id)
            if item.network_id and not (item.is_auto or item.is_none):
                raise errors.NetworkNotFound(item.network_id)
        return max_count

    def allocate_for_instance(
        self, instance: InstanceNetRef, requested: Sequence[RequestedNetwork]
    ) -> NetworkInfo:
        return []

    def deallocate_for_instance(self, instance: InstanceNetRef) -> None:
        return None

    def get_instance_nw_info(self, instance: InstanceNetRef) -> NetworkInfo:
        return []
