"""snapshot_instance and backup_instance on the instance's host (Nova's ComputeManager
``snapshot_instance``, ``backup_instance`` and ``_rotate_backups``).

The API registered a queued image and set the task state (``image_snapshot_pending`` or
``image_backup``). Here: ``image_snapshot`` (snapshot only, compare-and-swap on pending), the
driver copies the root disk, moving the task through ``image_pending_upload`` and
``image_uploading`` (compare-and-swap each); compute uploads what the driver produced into the
image, which becomes active; the task is cleared. The vm and power states do not change.
A failure deletes the image, clears the task and records a fault (Nova's
``delete_image_on_error``, ``reverts_task_state``, ``wrap_instance_fault``); the server stays as
it was. An instance deleted meanwhile only loses its unfinished image. A backup then deletes
the oldest backups of its type for the instance beyond ``rotation``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping

from openkeel.clients.image import ImageData, ImageError, ImageNotFound, ImageService
from openkeel.compute import guest
from openkeel.compute.host import ComputeHost
from openkeel.compute.operations.build import power_state_of
from openkeel.compute.operations.outcome import GONE, revert_task_state
from openkeel.compute.operations.outcome import image_caller as caller_of
from openkeel.compute.operations.power import _run
from openkeel.domain.instances import Instance, InstanceUpdate
from openkeel.domain.states import TaskState
from openkeel.rpc.message import CallContext
from openkeel.rpc.messages.compute import BackupInstance, SnapshotInstance
from openkeel.virt.model import SnapshotTarget

LOG = logging.getLogger(__name__)

SNAPSHOT_EVENT = "compute_snapshot_instance"
BACKUP_EVENT = "compute_backup_instance"


def snapshot(host: ComputeHost, context: CallContext, msg: SnapshotInstance) -> None:
    """createImage's work on this host."""

    def body(instance: Instance) -> None:
        host.records.update(
            instance.uuid,
            InstanceUpdate(task_state=TaskState.IMAGE_SNAPSHOT.value),
            expected_task_state=TaskState.IMAGE_SNAPSHOT_PENDING.value,
        )
        _copy_and_upload(host, context, instance, msg.image_id, TaskState.IMAGE_SNAPSHOT)

    _run(host, context, msg.instance_uuid, SNAPSHOT_EVENT, body, failed_with_image(host, context, msg.image_id),
         notify_extra={"snapshot_image_id": msg.image_id})  # fmt: skip


def backup(host: ComputeHost, context: CallContext, msg: BackupInstance) -> None:
    """createBackup's work on this host: a snapshot, then the rotation."""

    def body(instance: Instance) -> None:
        _copy_and_upload(host, context, instance, msg.image_id, TaskState.IMAGE_BACKUP)
        rotate_backups(host, context, instance.uuid, msg)

    _run(host, context, msg.instance_uuid, BACKUP_EVENT, body, failed_with_image(host, context, msg.image_id))  # fmt: skip


def _images(host: ComputeHost) -> ImageService:
    if host.images is None:
        raise ImageNotFound("(no image service configured on this host)")
    return host.images


def _copy_and_upload(
    host: ComputeHost, context: CallContext, instance: Instance, image_id: str, start: TaskState
) -> None:
    if copy_and_upload(host, context, instance, image_id, start):
        host.records.update(
            instance.uuid,
            InstanceUpdate(task_state=None),
            expected_task_state=TaskState.IMAGE_UPLOADING.value,
        )


def copy_and_upload(
    host: ComputeHost,
    context: CallContext,
    instance: Instance,
    image_id: str,
    start: TaskState,
    renamed: Mapping[TaskState, TaskState] | None = None,
) -> bool:
    """The driver copies the root disk into ``image_id`` and it is uploaded (active). The
    driver's task states go through ``renamed`` (shelving uses its own). False when the image
    was deleted before the copy began (the task is then cleared, as Nova does)."""
    uuid, images, caller = instance.uuid, _images(host), caller_of(context)
    names = dict(renamed or {})
    try:
        image = images.get(caller, image_id)
    except ImageNotFound:
        # deleted before we began (Nova: task cleared, a warning, no fault)
        LOG.warning("Image %s of instance %s's snapshot is gone", image_id, uuid)
        host.records.update(uuid, InstanceUpdate(task_state=None))
        return False
    host.records.update(uuid, InstanceUpdate(power_state=int(power_state_of(host, instance))))

    def update_task_state(new: TaskState, expected: TaskState | None) -> None:
        was = names.get(expected, expected) if expected is not None else start
        host.records.update(
            uuid,
            InstanceUpdate(task_state=names.get(new, new).value),
            expected_task_state=was.value,
        )

    ref = guest.instance_ref(host.conf, instance)
    target = SnapshotTarget(image_id, image.name or "", "raw", "bare")
    try:
        result = host.driver.snapshot(ref, target, update_task_state)
        data = ImageData(
            result.disk_format, result.container_format, result.chunks, result.size_bytes,
            dict(result.properties),
        )  # fmt: skip
        images.upload(caller, image_id, data)
    except GONE:
        delete_unfinished(host, context, image_id)  # the server was deleted meanwhile
        raise
    return True


def failed_with_image(
    host: ComputeHost, context: CallContext, image_id: str
) -> Callable[[ComputeHost, str, BaseException], None]:
    def on_error(host_: ComputeHost, uuid: str, exc: BaseException) -> None:
        delete_unfinished(host, context, image_id)
        revert_task_state(host_, uuid, exc)

    return on_error


def delete_unfinished(host: ComputeHost, context: CallContext, image_id: str) -> None:
    """Delete the snapshot's image unless it became active (it may be gone already)."""
    if host.images is None:
        return
    caller = caller_of(context)
    try:
        if host.images.get(caller, image_id).status != "active":
            host.images.delete(caller, image_id)
    except ImageNotFound:
        pass
    except ImageError:
        LOG.warning("Could not delete the image %s of a failed snapshot", image_id, exc_info=True)


def rotate_backups(host: ComputeHost, context: CallContext, uuid: str, msg: BackupInstance) -> None:
    """Delete the oldest backups of ``msg.backup_type`` of the instance beyond ``rotation``."""
    images, caller = _images(host), caller_of(context)
    filters = {
        "property-image_type": "backup",
        "property-backup_type": msg.backup_type,
        "property-instance_uuid": uuid,
    }
    found = images.list(caller, filters, sort=(("created_at", "desc"), ("id", "desc")))
    # Time stamps have whole seconds: the backup just made is the newest whatever they say.
    found.sort(key=lambda image: image.id != msg.image_id)
    LOG.debug("Found %d backups of %s (rotation %d)", len(found), uuid, msg.rotation)
    for image in found[msg.rotation :]:
        try:
            images.delete(caller, image.id)
        except ImageError:
            LOG.info("Could not delete backup %s of %s; going on", image.id, uuid, exc_info=True)


__all__ = ["BACKUP_EVENT", "SNAPSHOT_EVENT", "backup", "rotate_backups", "snapshot"]
