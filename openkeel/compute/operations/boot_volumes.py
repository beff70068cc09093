"""The volumes of a server being built (Nova's _prep_block_device and
nova.virt.block_device's attach of volume, image, snapshot and blank mappings), and what a
failed build gives back.

:func:`prepare` (the build, in task state ``block_device_mapping``): device names for the
mappings that have none (the root ``/dev/vda``, then the next free ``/dev/vdX``); each volume
to make (image, snapshot or blank → volume) created and waited on until available
(``[DEFAULT] block_device_allocate_retries`` more checks, ``..._interval`` seconds apart, as
Nova's _await_block_device_map_created); each volume attached the new-style way (attachment
create unless the API reserved it, update with this host's connector, complete). Every id is
written to the mapping the moment it exists, so whatever deletes the server later (terminate,
the API's local delete) finds it: a volume compute made is never left without its mapping
and its ``delete_on_termination``. Answers the driver's ``BlockDevice`` tuple.

:func:`detach_all` (any failed build, before a reschedule too): every attachment deleted, the
mappings keep their volumes (another host attaches them again). :func:`discard` (a build that
ends in ERROR): the ``delete_on_termination`` volumes deleted and their mappings removed, as
Nova's _cleanup_volumes.

Called by ``operations/build.py``.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping
from typing import Any

from openkeel.compute.host import ComputeHost
from openkeel.compute.operations.volumes import connector, volume_context
from openkeel.db.repositories import block_devices
from openkeel.db.repositories.block_devices import DeviceMapping
from openkeel.domain.errors import ComputeError
from openkeel.rpc.message import CallContext
from openkeel.virt.model import BlockDevice
from openkeel.volume.adapter import NewVolume, VolumeAdapter, VolumeContext

LOG = logging.getLogger(__name__)

_PENDING = ("creating", "downloading")


class VolumeNotCreated(ComputeError):
    """Nova's VolumeNotCreated."""

    def __init__(self, volume_id: str, seconds: int, attempts: int, status: str) -> None:
        super().__init__(
            f"Volume {volume_id} did not finish being created even after we waited {seconds} "
            f"seconds or {attempts} attempts. And its status is {status}."
        )


class BlockDevicePrepFailed(ComputeError):
    """A build whose volumes could not be prepared; not rescheduled (Nova's
    BuildAbortException "Failure prepping block device")."""

    def __init__(self, uuid: str) -> None:
        super().__init__(f"Build of instance {uuid} aborted: Failure prepping block device.")


def _devices(host: ComputeHost, uuid: str) -> list[DeviceMapping]:
    with host.records.db.connect() as conn:
        return block_devices.devices_of(conn, uuid)


def _record(host: ComputeHost, bdm_uuid: str, **values: str | None) -> None:
    with host.records.db.begin() as conn:
        block_devices.set_fields(conn, bdm_uuid, **values)


def _device_names(host: ComputeHost, devices: list[DeviceMapping]) -> list[DeviceMapping]:
    """Nova's default device names: the root ``/dev/vda``, the others the next free vdX."""
    taken = {d.device_name.removeprefix("/dev/") for d in devices if d.device_name}
    named = []
    for device in sorted(devices, key=lambda d: d.boot_index != 0):  # stable: request order
        name = device.device_name
        if not name:
            if device.boot_index == 0 and "vda" not in taken:
                letter = "a"
            else:
                letter = next(c for c in "abcdefghijklmnopqrstuvwxyz" if f"vd{c}" not in taken)
            name = f"/dev/vd{letter}"
            taken.add(name.removeprefix("/dev/"))
            _record(host, device.uuid, device_name=name)
        named.append(dataclasses.replace(device, device_name=name))
    return named


def prepare(host: ComputeHost, context: CallContext, uuid: str) -> tuple[BlockDevice, ...]:
    """Create, wait for and attach the server's volumes; its block devices for the driver.
    Raises :class:`BlockDevicePrepFailed` (the cause chained)."""
    devices = _devices(host, uuid)
    if not devices:
        return ()
    try:
        devices = _device_names(host, devices)
        prepared = []
        for device in devices:
            if device.is_volume:
                prepared.append(_volume(host, volume_context(context), uuid, device))
            else:
                prepared.append(_local(device))
        return tuple(sorted(prepared, key=_boot_order))
    except Exception as exc:
        LOG.exception("Failure prepping block devices of %s", uuid)
        raise BlockDevicePrepFailed(uuid) from exc


def attached(host: ComputeHost, uuid: str) -> tuple[BlockDevice, ...]:
    """The server's block devices as its mappings record them (volumes already attached,
    with their connection info), boot order first: for a driver defining the guest again
    (rebuild)."""
    devices = []
    for device in _devices(host, uuid):
        if not device.is_volume:
            devices.append(_local(device))
        elif device.volume_id:
            devices.append(_attached_volume(device, device.volume_id, device.volume_size,
                                            device.connection_info))  # fmt: skip
    return tuple(sorted(devices, key=_boot_order))


def _attached_volume(
    device: DeviceMapping, volume_id: str, size: int | None, info: Mapping[str, Any]
) -> BlockDevice:
    return BlockDevice(
        source_type=device.source_type, destination_type="volume",
        boot_index=device.boot_index, size_gb=size, volume_id=volume_id,
        device_name=device.device_name, disk_bus=device.disk_bus,
        device_type=device.device_type or "disk",
        delete_on_termination=device.delete_on_termination, connection_info=info,
        tag=device.tag,
    )  # fmt: skip


def _boot_order(device: BlockDevice) -> tuple[bool, int]:
    index = device.boot_index
    return (index is None or index < 0, index if index is not None else 0)


def _local(device: DeviceMapping) -> BlockDevice:
    return BlockDevice(
        source_type=device.source_type, destination_type="local",
        boot_index=device.boot_index, size_gb=device.volume_size,
        device_name=device.device_name, disk_bus=device.disk_bus,
        device_type=device.device_type, guest_format=device.guest_format,
        delete_on_termination=device.delete_on_termination, tag=device.tag,
    )  # fmt: skip


def _volumes(host: ComputeHost) -> VolumeAdapter:
    if host.volumes is None:
        raise ComputeError("No volume service is configured.")
    return host.volumes


def _volume(
    host: ComputeHost,
    ctx: VolumeContext,
    uuid: str,
    device: DeviceMapping,
) -> BlockDevice:
    volumes = _volumes(host)
    volume_id = device.volume_id
    if volume_id is None:
        volume_id = _create(host, ctx, device)
    attachment_id = device.attachment_id
    if attachment_id is None:
        attachment_id = volumes.attachment_create(ctx, volume_id, uuid)
        _record(host, device.uuid, attachment_id=attachment_id)
    wanted = {**connector(host), "mountpoint": device.device_name}
    info = volumes.attachment_update(ctx, attachment_id, wanted)
    volumes.attachment_complete(ctx, attachment_id)
    with host.records.db.begin() as conn:
        block_devices.set_connection(conn, device.uuid, info)
    size = device.volume_size or volumes.get(ctx, volume_id).size
    return _attached_volume(device, volume_id, size, info)


def _create(host: ComputeHost, ctx: VolumeContext, device: DeviceMapping) -> str:
    """Make the mapping's volume and wait until it is available; its id is on the mapping
    before the wait, and a volume that never becomes available is deleted at once when it
    was to be deleted on termination (Nova's _call_wait_func)."""
    volumes = _volumes(host)
    wanted = NewVolume(
        size=device.volume_size, name="", description="",
        snapshot_id=device.snapshot_id if device.source_type == "snapshot" else None,
        image_id=device.image_id if device.source_type == "image" else None,
        volume_type=device.volume_type,
    )  # fmt: skip
    volume_id = volumes.create_volume(ctx, wanted).id
    _record(host, device.uuid, volume_id=volume_id)
    try:
        _await_available(host, ctx, volume_id)
    except VolumeNotCreated:
        if device.delete_on_termination:
            _delete_volume(volumes, ctx, volume_id)
            _record(host, device.uuid, volume_id=None)
        raise
    return volume_id


def _await_available(host: ComputeHost, ctx: VolumeContext, volume_id: str) -> None:
    retries = int(host.conf.block_device_allocate_retries)
    interval = float(host.conf.block_device_allocate_retries_interval)
    attempts = retries + 1
    status = "unknown"
    for attempt in range(1, attempts + 1):
        status = _volumes(host).get(ctx, volume_id).status
        if status not in _PENDING:
            if status == "available":
                return
            LOG.warning("Volume %s finished being created but its status is %s", volume_id, status)
            break
        if attempt < attempts:
            host.sleep(interval)
    raise VolumeNotCreated(volume_id, int(interval * (attempt - 1)), attempt, status)


def _delete_volume(volumes: VolumeAdapter, ctx: VolumeContext, volume_id: str) -> bool:
    try:
        volumes.delete(ctx, volume_id)
    except Exception:
        LOG.exception("Could not delete volume %s", volume_id)
        return False
    return True


def _service_context(context: CallContext) -> VolumeContext:
    # As the host's terminate: the cleanup acts as the service.
    return VolumeContext(context.project_id, context.user_id, is_admin=True)


def detach_all(host: ComputeHost, context: CallContext, uuid: str) -> None:
    """Delete every attachment of the server's mappings (a failed build); the mappings keep
    their volumes. Failures are logged."""
    if host.volumes is None:
        return
    ctx = _service_context(context)
    for device in _devices(host, uuid):
        if not device.attachment_id:
            continue
        try:
            host.volumes.attachment_delete(ctx, device.attachment_id)
        except Exception:
            LOG.exception("Could not delete attachment %s of %s", device.attachment_id, uuid)
            continue
        _record(host, device.uuid, attachment_id=None)


def discard(host: ComputeHost, context: CallContext, uuid: str) -> None:
    """A build that ends in ERROR: its ``delete_on_termination`` volumes deleted and their
    mappings removed (the others stay the server's until it is deleted)."""
    if host.volumes is None:
        return
    ctx = _service_context(context)
    for device in _devices(host, uuid):
        doomed = device.volume_id and device.delete_on_termination
        if doomed and _delete_volume(host.volumes, ctx, str(device.volume_id)):
            with host.records.db.begin() as conn:
                block_devices.remove(conn, device.uuid)
