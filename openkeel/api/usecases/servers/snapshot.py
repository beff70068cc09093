"""createImage and createBackup (Nova's compute API ``snapshot`` and ``backup``).

Checks in Nova's order: policy (by the handler), the image metadata item quota before 2.39,
the volume-backed rules, then the server's state (ACTIVE, SHUTOFF, PAUSED or SUSPENDED with no
task; no lock check, as Nova). The image is registered queued in the image service with the
properties Nova copies (the server's ``image_*`` system metadata, ``instance_uuid``,
``user_id``, ``image_type``, the request's metadata; ``backup_type`` for a backup), then the
task state (``image_snapshot_pending`` or ``image_backup``, compare-and-swap on no task) and
the instance action are saved and compute's ``snapshot_instance``/``backup_instance`` is cast
to the server's host, which uploads the data (openkeel.compute.operations.snapshot). The image
is deleted again when the server cannot take the task or the cast cannot leave.
Called by openkeel.api.resources.servers.handlers_snapshot.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Mapping
from typing import Any

from openkeel.api.usecases.images import ImageProxy
from openkeel.api.usecases.quotas import effective_limit
from openkeel.api.usecases.sending import undone_if_unsent
from openkeel.api.usecases.servers.create import call_context
from openkeel.api.usecases.servers.lifecycle import ServerLifecycle
from openkeel.api.usecases.servers.lookup import FoundServer
from openkeel.api.usecases.servers.snapshot_volumes import VolumeBackedSnapshot
from openkeel.clients.image import Image
from openkeel.db.engine import reader
from openkeel.db.repositories import block_devices
from openkeel.domain.errors import ComputeError, Invalid, OverQuota
from openkeel.domain.instances import Instance, InstanceUpdate, UnexpectedDeletingTaskStateError
from openkeel.domain.states import InstanceInvalidState, TaskState, VmState
from openkeel.rpc.clients.compute import instance_host
from openkeel.rpc.messages.compute import BackupInstance, SnapshotInstance

LOG = logging.getLogger(__name__)

SYSMETA_PREFIX = "image_"
# Image attributes Nova keeps as attributes, not properties, when read back from system metadata.
INHERITED_ATTRIBUTES = ("min_ram", "min_disk", "disk_format", "container_format")
SKIPPED = frozenset(
    {"mappings", "block_device_mapping", "img_mappings", "img_block_device_mapping"}
)
NON_INHERITABLE = frozenset(
    {
        "cinder_encryption_key_id",
        "cinder_encryption_key_deletion_policy",
        "img_signature",
        "img_signature_hash_method",
        "img_signature_key_type",
        "img_signature_certificate_uuid",
    }
)
NON_INHERITABLE_PREFIXES = ("os_glance",)
BACKUP_POLICY = "os_compute_api:os-create-backup"


def snapshot_image(
    inst: Instance,
    name: str,
    image_type: str,
    extra: Mapping[str, Any],
    *,
    caller: tuple[str | None, str | None],
    non_inheritable: frozenset[str],
) -> Image:
    """The queued image record Nova registers for a snapshot (``caller``: project, user)."""
    project_id, user_id = caller
    attrs: dict[str, Any] = {}
    props: dict[str, Any] = {}
    sysmeta = {"image_base_image_ref": inst.image_ref or "", **inst.system_metadata}
    for key, value in sysmeta.items():
        if not key.startswith(SYSMETA_PREFIX):
            continue
        short = key[len(SYSMETA_PREFIX) :]
        if short in SKIPPED:
            continue
        (attrs if short in INHERITED_ATTRIBUTES else props)[short] = value
    for key in list(props):
        if key in NON_INHERITABLE | non_inheritable or key.startswith(NON_INHERITABLE_PREFIXES):
            del props[key]
    visibility = "private"
    if project_id != inst.project_id:
        # someone else's server (an admin): shared with the server's project
        visibility = "shared"
        props["instance_owner"] = inst.project_id
    props.update(instance_uuid=inst.uuid, user_id=str(user_id), image_type=image_type)
    props.update(extra)
    if image_type == "snapshot":  # the driver sets the formats of what it uploads
        attrs.pop("disk_format", None)
        attrs.pop("container_format", None)
    return Image(
        id="",
        name=name,
        status="queued",
        visibility=visibility,
        min_ram=int(attrs.get("min_ram") or 0),
        min_disk=int(attrs.get("min_disk") or 0),
        disk_format=attrs.get("disk_format"),
        container_format=attrs.get("container_format"),
        properties=props,
    )


class ServerSnapshotter(ServerLifecycle):
    """createImage and createBackup for one caller."""

    def check_metadata_quota(self, metadata: Mapping[str, Any]) -> None:
        """Nova's image metadata item quota (checked before 2.39 only): 403."""
        if not metadata:
            return
        ctx = self._context
        limit = effective_limit(self._services, ctx.project_id or "", ctx.user_id, "metadata_items")
        if 0 <= limit < len(metadata):
            raise OverQuota("Image metadata limit exceeded")

    def authorize_backup(self, found: FoundServer) -> None:
        """``os_compute_api:os-create-backup`` on the server's project."""
        self._context.can(BACKUP_POLICY, {"project_id": found.instance.project_id})

    def create_image(self, found: FoundServer, name: str, metadata: Mapping[str, Any]) -> Image:
        """Register the snapshot image and start the snapshot on the server's host."""
        inst = found.instance
        if self._volume_backed(found):
            self._context.can(
                "os_compute_api:servers:create_image:allow_volume_backed",
                {"project_id": inst.project_id},
            )
            self._gate("snapshot_volume_backed", inst)
            return VolumeBackedSnapshot(self._services, self._context).create(
                found, self._register_wanted(inst, name, "snapshot", metadata)
            )
        self._gate("snapshot", inst)
        image = self._register(inst, name, "snapshot", metadata)
        task = TaskState.IMAGE_SNAPSHOT_PENDING.value
        self._start(found, image, task, "createImage", SnapshotInstance(inst.uuid, image.id))
        return image

    def create_backup(
        self,
        found: FoundServer,
        name: str,
        backup: tuple[str, int],
        metadata: Mapping[str, Any],
    ) -> Image:
        """Register the backup image, start it on the host; it rotates the older backups."""
        backup_type, rotation = backup
        inst = found.instance
        self._gate("backup", inst)
        if self._volume_backed(found):
            raise Invalid("Backup is not supported for volume-backed instances.")
        image = self._register(inst, name, "backup", {**metadata, "backup_type": backup_type})
        message = BackupInstance(inst.uuid, image.id, backup_type, rotation)
        self._start(found, image, TaskState.IMAGE_BACKUP.value, "createBackup", message)
        return image

    # --- steps -----------------------------------------------------------------------------

    def _volume_backed(self, found: FoundServer) -> bool:
        """Nova's is_volume_backed_instance: no image, or a volume as the root device."""
        if not found.instance.image_ref:
            return True
        with reader(self._cell(found)).connect() as conn:
            devices = block_devices.devices_of(conn, found.instance.uuid)
        return any(d.boot_index == 0 and d.is_volume for d in devices)

    def _register_wanted(
        self, inst: Instance, name: str, image_type: str, extra: Mapping[str, Any]
    ) -> Image:
        ctx = self._context
        return snapshot_image(
            inst,
            name,
            image_type,
            extra,
            caller=(ctx.project_id, ctx.user_id),
            non_inheritable=frozenset(self._conf.non_inheritable_image_properties or ()),
        )

    def _register(
        self, inst: Instance, name: str, image_type: str, extra: Mapping[str, Any]
    ) -> Image:
        wanted = self._register_wanted(inst, name, image_type, extra)
        return ImageProxy(self._services, self._context).create(wanted)

    def _start(
        self,
        found: FoundServer,
        image: Image,
        task: str,
        action: str,
        message: SnapshotInstance | BackupInstance,
    ) -> None:
        inst = found.instance
        try:
            updated = self._update(found, InstanceUpdate(task_state=task), [None], action=action)
        except ComputeError as exc:
            self._forget(image)
            if isinstance(exc, UnexpectedDeletingTaskStateError):
                raise InstanceInvalidState(action, inst.uuid, "task_state", TaskState.DELETING.value) from exc  # fmt: skip
            if exc.code == 404:  # deleted meanwhile: Nova's 409 on vm_state deleted
                raise InstanceInvalidState(action, inst.uuid, "vm_state", VmState.DELETED.value) from exc  # fmt: skip
            raise
        compute = self._compute()
        if compute is None:
            return
        with undone_if_unsent(self._cell(found), inst.uuid, action, task, lambda: self._forget(image)):  # fmt: skip
            compute.cast(call_context(self._context), instance_host(updated), message)

    def _forget(self, image: Image) -> None:
        """Delete the image of a snapshot that will not happen (it may be gone already)."""
        with contextlib.suppress(ComputeError):
            ImageProxy(self._services, self._context).delete(image.id)


__all__ = ["ServerSnapshotter", "snapshot_image"]
