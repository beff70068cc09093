"""The rows a server create writes: one ``Instance`` (BUILDING/scheduling) and one
``RequestSpec`` per server. Pure construction; called by ``create.py``.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from openkeel.api.context import RequestContext
from openkeel.api.usecases.servers.commands import CreateServers, RequestedLocation
from openkeel.clients.image import Image
from openkeel.db.repositories.request_specs import RequestSpec
from openkeel.domain.flavors import Flavor
from openkeel.domain.instances import FlavorSnapshot, Instance
from openkeel.domain.server_groups import ServerGroup
from openkeel.domain.states import PowerState, TaskState, VmState


def snapshot(flavor: Flavor) -> FlavorSnapshot:
    """The flavor as the instance keeps it."""
    return FlavorSnapshot(
        flavorid=flavor.flavorid,
        name=flavor.name,
        memory_mb=flavor.memory_mb,
        vcpus=flavor.vcpus,
        root_gb=flavor.root_gb,
        ephemeral_gb=flavor.ephemeral_gb,
        swap=flavor.swap,
        rxtx_factor=flavor.rxtx_factor or 1.0,
        vcpu_weight=flavor.vcpu_weight,
        is_public=flavor.is_public,
        extra_specs=dict(flavor.extra_specs),
        description=flavor.description,
        id=flavor.id,
    )


def image_system_metadata(found: Image | None, root_gb: int) -> dict[str, str]:
    """Nova's ``image_*`` system metadata: what a snapshot of the server copies (min_disk at
    least the flavor's root disk, as Nova stores it; the image as ``image_base_image_ref``)."""
    if found is None:
        return {}
    meta = {f"image_{k}": str(v)[:255] for k, v in found.properties.items() if v is not None}
    min_disk = root_gb if found.disk_format == "vhd" else max(found.min_disk, root_gb)
    meta.update({"image_min_ram": str(found.min_ram), "image_min_disk": str(min_disk)})
    meta["image_base_image_ref"] = found.id
    if found.disk_format:
        meta["image_disk_format"] = found.disk_format
    if found.container_format:
        meta["image_container_format"] = found.container_format
    return meta


def sanitize_hostname(name: str, default: str) -> str:
    """Nova's hostname from a display name: RFC 952/1123 characters, at most 63 long."""
    text = name.encode("latin-1", "ignore").decode("latin-1")[:63]
    text = re.sub(r"[ _.]", "-", text)
    text = re.sub(r"[^\w.-]+", "", text).lower().strip(".-")
    return text if text else default[:63]


def _display_name(cmd: CreateServers, index: int, count: int) -> str:
    # Nova's multi_instance_display_name_template default: "%(name)s-%(count)d".
    return f"{cmd.name}-{index + 1}" if count > 1 else cmd.name


def _auto_disk_config(cmd: CreateServers, found: Image | None) -> bool:
    if cmd.auto_disk_config is not None:
        return cmd.auto_disk_config
    if found is None:
        return False
    value = str(found.properties.get("auto_disk_config", "false")).lower()
    return value in ("true", "1", "yes", "on")


def build_instances(
    cmd: CreateServers,
    ctx: RequestContext,
    flavor: Flavor,
    found: Image | None,
    key: Any,
    zone: str | None,
    reservation_id: str,
    count: int,
    first_uuid: str | None = None,
) -> list[Instance]:
    """The ``count`` instances of the request, as their build requests store them (the
    first one's uuid ``first_uuid`` when given)."""
    now = datetime.now(UTC).replace(tzinfo=None)
    uuids = [str(uuid.uuid4()) for _ in range(count)]
    if first_uuid is not None and uuids:
        uuids[0] = first_uuid
    return [
        Instance(
            uuid=uuids[index],
            project_id=str(ctx.project_id),
            user_id=str(ctx.user_id),
            flavor=snapshot(flavor),
            display_name=_display_name(cmd, index, count),
            display_description=cmd.description,
            hostname=cmd.hostname
            or sanitize_hostname(_display_name(cmd, index, count), f"Server-{uuids[index]}"),
            image_ref=cmd.image_ref or "",
            vm_state=VmState.BUILDING.value,
            task_state=TaskState.SCHEDULING.value,
            power_state=int(PowerState.NOSTATE),
            availability_zone=zone,
            key_name=cmd.key_name,
            key_data=key.public_key if key is not None else None,
            user_data=cmd.user_data,
            config_drive="True" if cmd.config_drive else "",
            metadata=dict(cmd.metadata),
            system_metadata=image_system_metadata(found, flavor.root_gb),
            tags=tuple(cmd.tags),
            reservation_id=reservation_id,
            launch_index=index,
            access_ip_v4=cmd.access_ip_v4,
            access_ip_v6=cmd.access_ip_v6,
            progress=0,
            kernel_id="",
            ramdisk_id="",
            auto_disk_config=_auto_disk_config(cmd, found),
            trusted_certs=cmd.trusted_certs,
            security_groups=cmd.security_groups or ("default",),
            created_at=now,
            updated_at=None,
        )
        for index in range(count)
    ]


def _hints(raw: Mapping[str, Any]) -> dict[str, list[str]]:
    # The request spec keeps every hint as a list of strings, as Nova's does.
    out: dict[str, list[str]] = {}
    for name, value in raw.items():
        values = value if isinstance(value, list) else [value]
        out[name] = [v if isinstance(v, str) else str(v) for v in values]
    return out


def _group(group: ServerGroup | None) -> dict[str, Any] | None:
    if group is None:
        return None
    return {
        "uuid": group.uuid,
        "name": group.name,
        "policy": group.policy,
        "rules": dict(group.rules),
        "members": list(group.members),
        "hosts": [],
    }


def request_spec(
    cmd: CreateServers,
    inst: Instance,
    flavor: Flavor,
    found: Image | None,
    group: ServerGroup | None,
    location: RequestedLocation,
    count: int,
    volume_backed: bool = False,
) -> RequestSpec:
    """What the scheduler needs to place ``inst``."""
    destination = None
    if cmd.requested_host or cmd.requested_node:
        destination = {"host": cmd.requested_host, "node": cmd.requested_node}
    networks: tuple[Mapping[str, Any], ...] = ()
    if isinstance(cmd.networks, tuple):
        networks = tuple(n.to_primitive() for n in cmd.networks)
    return RequestSpec(
        instance_uuid=inst.uuid,
        project_id=inst.project_id,
        user_id=inst.user_id,
        flavor=inst.flavor,
        image=image_spec(found),
        num_instances=count,
        availability_zone=location.zone,
        scheduler_hints=_hints(cmd.scheduler_hints),
        instance_group=_group(group),
        requested_destination=destination,
        force_hosts=(location.host,) if location.host else (),
        force_nodes=(location.node,) if location.node else (),
        security_groups=tuple(inst.security_groups),
        is_bfv=volume_backed or not cmd.image_ref,
        requested_networks=networks,
        **cmd.port_requests.spec_fields(),
    )


def image_spec(found: Image | None) -> dict[str, Any]:
    if found is None:
        return {}
    return {
        "id": found.id,
        "name": found.name,
        "min_ram": found.min_ram,
        "min_disk": found.min_disk,
        "size": found.size,
        "disk_format": found.disk_format,
        "container_format": found.container_format,
        "properties": dict(found.properties),
    }
