"""The typed commands the servers handlers build from a request (microversion already applied).

``CreateServers`` is what ``create.py`` executes; ``NetworkRequest`` one entry of ``networks``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from openkeel.domain.resource_requests import PortRequests


@dataclass(frozen=True)
class NetworkRequest:
    """One requested NIC: a network (optionally a fixed IP) or a port; ``tag`` from 2.32/2.42."""

    network_id: str | None = None
    port_id: str | None = None
    fixed_ip: str | None = None
    tag: str | None = None

    def to_primitive(self) -> dict[str, Any]:
        """The RPC shape (Nova's NetworkRequest field names)."""
        return {
            "network_id": self.network_id,
            "port_id": self.port_id,
            "address": self.fixed_ip,
            "tag": self.tag,
        }


NETWORKS_AUTO = "auto"
NETWORKS_NONE = "none"


@dataclass(frozen=True)
class CreateServers:
    """``POST /servers`` after schema validation and microversion interpretation."""

    name: str
    flavor_ref: str
    image_ref: str = ""
    description: str | None = None
    hostname: str | None = None
    admin_pass: str | None = None
    metadata: Mapping[str, str] = field(default_factory=dict)
    user_data: str | None = None
    key_name: str | None = None
    config_drive: bool = False
    access_ip_v4: str | None = None
    access_ip_v6: str | None = None
    auto_disk_config: bool | None = None
    # None: not given (legacy behaviour: one NIC on each available network).
    networks: tuple[NetworkRequest, ...] | str | None = None
    block_device_mappings: tuple[Mapping[str, Any], ...] = ()
    legacy_bdm: bool = False
    multiattach: bool = False  # 2.60: multiattach volumes may be mapped
    min_count: int = 1
    max_count: int = 1
    return_reservation_id: bool = False
    security_groups: tuple[str, ...] | None = None
    availability_zone: str | None = None
    scheduler_hints: Mapping[str, Any] = field(default_factory=dict)
    tags: tuple[str, ...] = ()
    trusted_certs: tuple[str, ...] | None = None
    personality: tuple[tuple[str, str], ...] = ()
    requested_host: str | None = None
    requested_node: str | None = None
    # The requested ports' resource requests (QoS), found while checking the networks.
    port_requests: PortRequests = field(default_factory=PortRequests)


@dataclass(frozen=True)
class CreatedServers:
    """What the create answer needs."""

    first_uuid: str
    reservation_id: str
    admin_pass: str
    auto_disk_config: bool


@dataclass(frozen=True)
class RequestedLocation:
    """Where the user asked the server to go."""

    zone: str | None
    host: str | None
    node: str | None
