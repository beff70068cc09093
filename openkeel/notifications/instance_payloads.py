"""Versioned instance payloads (Nova 34.0.0's InstancePayload family): action, create, update,
exists and the action payloads with one more field (resize prep, rebuild, rescue, snapshot).
Pure builders over the domain ``Instance``; called through openkeel.notifications.emitter."""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from openkeel.domain.instances import FlavorSnapshot, Instance
from openkeel.domain.keypairs import KeyPair
from openkeel.notifications.envelope import fixed_addresses, iso, ovo, power_state_name
from openkeel.notifications.versioned import (
    audit_period_payload,
    exception_payload,
    flavor_payload,
    keypair_payload,
)


@dataclass(frozen=True)
class Initiator:
    """Who asked for what a notification reports (the request's context)."""

    request_id: str | None = None
    user_id: str | None = None
    project_id: str | None = None


# Instance action payloads that add one field (event action -> (object name, version)).
ACTION_PAYLOADS = {
    "resize_prep": ("InstanceActionResizePrepPayload", "1.4"),
    "rebuild": ("InstanceActionRebuildPayload", "1.10"),
    "rebuild_scheduled": ("InstanceActionRebuildPayload", "1.10"),
    "rescue": ("InstanceActionRescuePayload", "1.4"),
    "snapshot": ("InstanceActionSnapshotPayload", "1.10"),
    "volume_attach": ("InstanceActionVolumePayload", "1.7"),
    "volume_detach": ("InstanceActionVolumePayload", "1.7"),
    "volume_swap": ("InstanceActionVolumeSwapPayload", "1.9"),
}


def ip_addresses(network_info: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """IpPayload 1.0 per fixed address of each VIF of Nova's network model."""
    return [
        ovo(
            "IpPayload",
            "1.0",
            {
                "label": network.get("label"),
                "mac": vif.get("address"),
                "meta": dict(vif.get("meta") or {}),
                "port_uuid": vif.get("id"),
                "version": int(ip.get("version") or subnet.get("version") or 4),
                "address": ip.get("address"),
                "device_name": vif.get("devname"),
            },
        )
        for vif, network, subnet, ip in fixed_addresses(network_info)
    ]


def instance_data(instance: Instance, initiator: Initiator) -> dict[str, Any]:
    """The fields of InstancePayload 1.9 (no envelope)."""
    sysmeta = instance.system_metadata
    return {
        "uuid": instance.uuid,
        "user_id": instance.user_id,
        "tenant_id": instance.project_id,
        "reservation_id": instance.reservation_id,
        "display_name": instance.display_name,
        "display_description": instance.display_description,
        "host_name": instance.hostname,
        "host": instance.host,
        "node": instance.node,
        "os_type": instance.os_type,
        "architecture": instance.architecture,
        "availability_zone": instance.availability_zone,
        "image_uuid": instance.image_ref or "",
        "key_name": instance.key_name,
        "kernel_id": instance.kernel_id or "",
        "ramdisk_id": instance.ramdisk_id or "",
        "created_at": iso(instance.created_at),
        "launched_at": iso(instance.launched_at),
        "terminated_at": iso(instance.terminated_at),
        "deleted_at": iso(instance.deleted_at),
        "updated_at": iso(instance.updated_at),
        "state": instance.vm_state,
        "power_state": power_state_name(instance.power_state),
        "task_state": instance.task_state,
        "progress": instance.progress or 0,
        "ip_addresses": ip_addresses(instance.network_info),
        # None unless [notifications] bdms_in_notifications / include_share_mapping (the
        # emitter fills them in then), as Nova leaves them.
        "block_devices": None,
        "flavor": flavor_payload(instance.flavor),
        "metadata": dict(instance.metadata),
        "locked": instance.locked,
        "auto_disk_config": "AUTO" if instance.auto_disk_config else "MANUAL",
        "action_initiator_user": initiator.user_id,
        "action_initiator_project": initiator.project_id,
        "locked_reason": sysmeta.get("locked_reason") if instance.locked else None,
        "request_id": initiator.request_id,
        "shares": None,
    }


def action_payload(
    instance: Instance,
    initiator: Initiator,
    *,
    fault: BaseException | None = None,
    action: str = "",
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """InstanceActionPayload 1.9, or the action's own payload (``ACTION_PAYLOADS``) with the
    ``extra`` field it adds (``new_flavor``, ``rescue_image_ref``, ``snapshot_image_id``...)."""
    data = instance_data(instance, initiator)
    data["fault"] = exception_payload(fault) if fault is not None else None
    name, version = ACTION_PAYLOADS.get(action, ("InstanceActionPayload", "1.9"))
    if action in ("rebuild", "rebuild_scheduled"):
        data["trusted_image_certificates"] = list(instance.trusted_certs or ()) or None
    data.update(extra or {})
    return ovo(name, version, data)


def resize_prep_extra(new_flavor: FlavorSnapshot) -> dict[str, Any]:
    return {"new_flavor": flavor_payload(new_flavor)}


def create_payload(
    instance: Instance,
    initiator: Initiator,
    *,
    instance_name: str,
    keypairs: Iterable[KeyPair] = (),
    fault: BaseException | None = None,
) -> dict[str, Any]:
    """InstanceCreatePayload 1.13."""
    data = instance_data(instance, initiator)
    data["fault"] = exception_payload(fault) if fault is not None else None
    data["keypairs"] = [keypair_payload(k) for k in keypairs]
    data["tags"] = list(instance.tags)
    data["trusted_image_certificates"] = (
        list(instance.trusted_certs) if instance.trusted_certs else None
    )
    data["instance_name"] = instance_name
    return ovo("InstanceCreatePayload", "1.13", data)


@dataclass(frozen=True)
class StateChange:
    """The states an instance.update reports (before and after one save)."""

    old_state: str | None
    state: str | None
    old_task_state: str | None
    new_task_state: str | None
    old_display_name: str | None = None


def update_payload(
    instance: Instance,
    initiator: Initiator,
    change: StateChange,
    audit_period: tuple[datetime.datetime, datetime.datetime],
) -> dict[str, Any]:
    """InstanceUpdatePayload 2.1 (Nova's instance.update on a state change)."""
    data = instance_data(instance, initiator)
    data["state_update"] = ovo(
        "InstanceStateUpdatePayload",
        "1.0",
        {
            "old_state": change.old_state,
            "state": change.state,
            "old_task_state": change.old_task_state,
            "new_task_state": change.new_task_state,
        },
    )
    data["audit_period"] = audit_period_payload(*audit_period)
    data["old_display_name"] = change.old_display_name
    data["tags"] = list(instance.tags)
    return ovo("InstanceUpdatePayload", "2.1", data)


def exists_payload(
    instance: Instance,
    initiator: Initiator,
    audit_period: tuple[datetime.datetime, datetime.datetime],
) -> dict[str, Any]:
    """InstanceExistsPayload 2.1 (the usage audit's instance.exists)."""
    data = instance_data(instance, initiator)
    data["audit_period"] = audit_period_payload(*audit_period)
    return ovo("InstanceExistsPayload", "2.1", data)
