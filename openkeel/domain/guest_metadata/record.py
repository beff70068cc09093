"""The inputs of the metadata documents: one server as the metadata service sees it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from openkeel.domain.guest_metadata.password import joined
from openkeel.domain.instances import Instance


@dataclass(frozen=True)
class GuestKey:
    """The server's key pair (``type`` ssh or x509)."""

    name: str
    type: str
    data: str


@dataclass(frozen=True)
class GuestRecord:
    """Everything the OpenStack and EC2 documents are made of.

    ``user_data`` is base64 as the API stored it; ``hostname`` already carries
    ``[api] dhcp_domain``; ``ec2_id`` is the cell DB row id (EC2 ids are ``i-%08x`` of it).
    """

    uuid: str
    project_id: str
    name: str
    hostname: str
    launch_index: int = 0
    availability_zone: str | None = None
    reservation_id: str = ""
    ec2_id: int = 0
    image_ref: str = ""
    flavor_name: str = ""
    key: GuestKey | None = None
    meta: Mapping[str, str] = field(default_factory=dict)
    user_data: str | None = None
    network_info: tuple[Mapping[str, Any], ...] = ()
    security_groups: tuple[str, ...] = ()
    password: str = ""
    root_device_name: str | None = None
    kernel_id: str | None = None
    ramdisk_id: str | None = None
    dedicated_cpus: tuple[int, ...] = ()
    # Dynamic vendordata targets are told these (Nova's request body).
    boot_roles: str = ""


def key_type_of(key_data: str | None) -> str:
    """A key pair's type from its public key: x509 for a PEM certificate, else ssh."""
    return "x509" if (key_data or "").lstrip().startswith("-----BEGIN CERTIFICATE") else "ssh"


def from_instance(instance: Instance, key_type: str = "ssh", dhcp_domain: str = "") -> GuestRecord:
    """The metadata inputs of ``instance`` (``key_type``: its key pair's type)."""
    hostname = instance.hostname or ""
    if dhcp_domain:
        hostname = f"{hostname}.{dhcp_domain}"
    key = None
    if instance.key_name and instance.key_data:
        key = GuestKey(instance.key_name, key_type, instance.key_data)
    sysmeta = instance.system_metadata
    return GuestRecord(
        uuid=instance.uuid, project_id=instance.project_id,
        name=instance.display_name or "", hostname=hostname,
        launch_index=instance.launch_index or 0,
        availability_zone=instance.availability_zone,
        reservation_id=instance.reservation_id or "", ec2_id=instance.id or 0,
        image_ref=instance.image_ref or "", flavor_name=instance.flavor.name,
        key=key, meta=dict(instance.metadata), user_data=instance.user_data,
        network_info=tuple(instance.network_info),
        security_groups=tuple(instance.security_groups),
        password=joined(sysmeta),
        root_device_name=instance.root_device_name,
        kernel_id=instance.kernel_id, ramdisk_id=instance.ramdisk_id,
        boot_roles=sysmeta.get("boot_roles") or "",
    )  # fmt: skip
