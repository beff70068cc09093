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


class NetworkAdapter(abc.ABC):
    """Ports and addresses for instances."""

    name = "abstract"

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

    @abc.abstractmethod
    def allocate_for_instance(
        self, instance: InstanceNetRef, requested: Sequence[RequestedNetwork]
    ) -> NetworkInfo:
        """Create/bind the instance's ports and return its network_info.

        Idempotent: a second call for the same instance returns the existing allocation.
        """

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
