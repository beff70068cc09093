"""Nova's legacy unversioned payloads: the instance usage dict of ``compute.instance.*``
events and the plain dicts of the API's keypair/aggregate/server group events. Pure; called
through openkeel.notifications.emitter."""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Mapping
from typing import Any

from openkeel.domain.instances import Instance
from openkeel.notifications.envelope import fixed_addresses

# Versioned action name -> the legacy event's name where they differ.
LEGACY_ACTIONS = {
    "resize_prep": "resize.prep",
    "resize_finish": "finish_resize",
    "resize_confirm": "resize.confirm",
    "resize_revert": "resize.revert",
    "live_migration_pre": "live_migration.pre",
    "live_migration_post": "live_migration._post",
    "live_migration_post_dest": "live_migration.post.dest",
    "live_migration_rollback": "live_migration._rollback",
    "live_migration_rollback_dest": "live_migration.rollback.dest",
    "shelve_offload": "shelve_offload",
    "rebuild_scheduled": "rebuild.scheduled",
}

# Legacy image metadata keys come from ``image_*`` system metadata, without the prefix.
_IMAGE_PREFIX = "image_"


def legacy_event(action: str, phase: str | None) -> str:
    """``compute.instance.<action>[.<phase>]`` in the legacy spelling."""
    name = f"compute.instance.{LEGACY_ACTIONS.get(action, action)}"
    return f"{name}.{phase}" if phase else name


def _time(value: datetime.datetime | None) -> str:
    """Nova's null_safe_isotime: ``2012-10-29T13:42:11.000000`` or ``""``."""
    if value is None:
        return ""
    if value.tzinfo is not None:
        value = value.astimezone(datetime.UTC).replace(tzinfo=None)
    return value.strftime("%Y-%m-%dT%H:%M:%S.%f")


def fixed_ips(network_info: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Each fixed address with its network's label and its VIF's MAC (Nova's fixed_ips)."""
    return [
        {**ip, "label": network.get("label"), "vif_mac": vif.get("address")}
        for vif, network, _, ip in fixed_addresses(network_info)
    ]


def instance_info(
    instance: Instance, *, image_ref_url: str | None = None, **extra: Any
) -> dict[str, Any]:
    """Nova's ``info_from_instance`` dict for ``compute.instance.*`` legacy events."""
    flavor = instance.flavor
    info: dict[str, Any] = {
        "tenant_id": instance.project_id,
        "user_id": instance.user_id,
        "instance_id": instance.uuid,
        "display_name": instance.display_name,
        "reservation_id": instance.reservation_id,
        "hostname": instance.hostname,
        "instance_type": flavor.name,
        "instance_type_id": flavor.id,
        "instance_flavor_id": flavor.flavorid,
        "architecture": instance.architecture,
        "memory_mb": flavor.memory_mb,
        "disk_gb": flavor.root_gb + flavor.ephemeral_gb,
        "vcpus": flavor.vcpus,
        "root_gb": flavor.root_gb,
        "ephemeral_gb": flavor.ephemeral_gb,
        "host": instance.host,
        "node": instance.node,
        "availability_zone": instance.availability_zone,
        "cell_name": "",
        "created_at": str(instance.created_at) if instance.created_at else "",
        "terminated_at": _time(instance.terminated_at),
        "deleted_at": _time(instance.deleted_at),
        "launched_at": _time(instance.launched_at),
        "image_ref_url": image_ref_url if image_ref_url is not None else instance.image_ref,
        "os_type": instance.os_type,
        "kernel_id": instance.kernel_id or "",
        "ramdisk_id": instance.ramdisk_id or "",
        "state": instance.vm_state,
        "state_description": instance.task_state or "",
        "progress": int(instance.progress) if instance.progress else "",
        "access_ip_v4": instance.access_ip_v4,
        "access_ip_v6": instance.access_ip_v6,
        "fixed_ips": fixed_ips(instance.network_info),
        "image_meta": {
            key.removeprefix(_IMAGE_PREFIX): value
            for key, value in instance.system_metadata.items()
            if key.startswith(_IMAGE_PREFIX)
        },
        "metadata": dict(instance.metadata),
    }
    info.update(extra)
    return info


def exception_info(exc: BaseException) -> dict[str, Any]:
    """The fault keys a legacy ``.error`` event adds (Nova's exception_to_dict)."""
    code = getattr(exc, "code", 500)
    return {
        "message": str(exc) or type(exc).__name__,
        "code": code if isinstance(code, int) else 500,
    }
