"""Instance record → the driver's value objects (openkeel.virt.model), for every operation.

The hypervisor-side name follows ``[DEFAULT] instance_name_template`` over the cell DB row id,
as Nova's ``instance.name``; network_info (Nova's model) becomes ``NetworkInterface`` tuples.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from oslo_config import cfg

from openkeel.domain.instances import Instance
from openkeel.virt.model import FlavorSpec, ImageSpec, InstanceRef, InstanceSpec, NetworkInterface


def instance_name(conf: cfg.ConfigOpts, instance: Instance) -> str:
    """Nova's ``instance.name`` from the template (``instance-%08x`` by default)."""
    template: str = conf.instance_name_template
    try:
        if "%(" in template:
            return template % {"id": instance.id or 0, "uuid": instance.uuid}
        return template % (instance.id or 0)
    except (TypeError, ValueError, KeyError):
        return f"instance-{instance.id or 0:08x}"


def instance_ref(conf: cfg.ConfigOpts, instance: Instance) -> InstanceRef:
    return InstanceRef(instance.uuid, instance_name(conf, instance), instance.project_id)


def interfaces(network_info: Iterable[Mapping[str, Any]]) -> tuple[NetworkInterface, ...]:
    """The VIFs of a network_info as driver value objects."""
    vifs = []
    for vif in network_info:
        network = vif.get("network") or {}
        ips = [
            ip["address"]
            for subnet in network.get("subnets") or ()
            for ip in subnet.get("ips") or ()
        ]
        vifs.append(
            NetworkInterface(
                port_id=str(vif["id"]),
                network_id=str(network.get("id", "")),
                mac_address=str(vif.get("address", "")),
                fixed_ips=tuple(ips),
                vif_type=str(vif.get("type") or "ovs"),
                vnic_type=str(vif.get("vnic_type") or "normal"),
                mtu=(network.get("meta") or {}).get("mtu"),
                tag=vif.get("tag"),
                network_name=str(network.get("label") or ""),
            )
        )
    return tuple(vifs)


# image_* system metadata keys that describe the image itself, not one of its properties.
_IMAGE_FIELDS = ("min_ram", "min_disk", "base_image_ref", "disk_format", "container_format")


def _int(text: str | None) -> int:
    try:
        return int(text or 0)
    except ValueError:
        return 0


def image_spec(instance: Instance) -> ImageSpec | None:
    """The image the instance was built (or last rebuilt) from, as recorded in its ``image_*``
    system metadata at the API (Nova's ``get_image_from_system_metadata``): its properties
    reach the driver without asking the image service again. None when volume-backed."""
    if not instance.image_ref:
        return None
    meta = instance.system_metadata or {}
    props = {k[6:]: v for k, v in meta.items() if k.startswith("image_") and k[6:] not in _IMAGE_FIELDS}  # fmt: skip
    return ImageSpec(
        image_id=instance.image_ref,
        disk_format=meta.get("image_disk_format"),
        container_format=meta.get("image_container_format"),
        min_disk_gb=_int(meta.get("image_min_disk")),
        min_ram_mb=_int(meta.get("image_min_ram")),
        properties=props,
    )


def instance_spec(
    conf: cfg.ConfigOpts,
    instance: Instance,
    network_info: Iterable[Mapping[str, Any]] | None = None,
) -> InstanceSpec:
    """Everything the driver needs to define the guest."""
    flavor = instance.flavor
    return InstanceSpec(
        ref=instance_ref(conf, instance),
        hostname=instance.hostname or instance.uuid,
        user_id=instance.user_id,
        flavor=FlavorSpec(
            flavor_id=flavor.flavorid,
            name=flavor.name,
            vcpus=flavor.vcpus,
            memory_mb=flavor.memory_mb,
            root_gb=flavor.root_gb,
            ephemeral_gb=flavor.ephemeral_gb,
            swap_mb=flavor.swap,
            extra_specs=dict(flavor.extra_specs),
        ),
        image=image_spec(instance),
        network=interfaces(instance.network_info if network_info is None else network_info),
        user_data=instance.user_data,
        metadata=dict(instance.metadata),
        key_data=instance.key_data,
        config_drive=bool(instance.config_drive),
        display_name=instance.display_name or "",
        availability_zone=instance.availability_zone,
    )
