"""Inputs the manifests need that openkeel.virt.model does not carry (yet).

Compute fills a :class:`GuestExtras` next to the InstanceSpec when it calls the KubeVirt driver:
the key pair (model only has the public key text), the subnets of each network (for
network_data.json), the launch index and vendor data.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from openkeel.virt.model import JsonValue


@dataclass(frozen=True)
class KeyPair:
    """The key pair named by the server's ``key_name`` (Nova copies it into the instance)."""

    name: str
    public_key: str
    type: str = "ssh"


@dataclass(frozen=True)
class Route:
    destination: str  # CIDR
    gateway: str


@dataclass(frozen=True)
class Subnet:
    """One Neutron subnet a port has an address on."""

    cidr: str
    gateway: str | None = None
    dns_nameservers: tuple[str, ...] = ()
    routes: tuple[Route, ...] = ()
    dhcp: bool = True


@dataclass(frozen=True)
class GuestExtras:
    """Everything besides the InstanceSpec that ends up in the guest's metadata."""

    key_pair: KeyPair | None = None
    subnets: Mapping[str, tuple[Subnet, ...]] = field(default_factory=dict)  # by network_id
    launch_index: int = 0
    vendor_data: Mapping[str, JsonValue] = field(default_factory=dict)
    admin_password: str | None = None
