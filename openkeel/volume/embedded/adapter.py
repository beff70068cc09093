"""The volume adapter over the embedded volume service, in process: the same rules and rows
the volume API serves, so a volume Nova attaches shows ``in-use`` in ``openstack volume
list``. Made once per API database (:mod:`openkeel.volume.factory`)."""

from __future__ import annotations

import datetime
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import sqlalchemy as sa

from openkeel.db.volume_store import VolumeStore
from openkeel.volume.adapter import (
    AttachmentInfo,
    NewVolume,
    SnapshotInfo,
    VolumeContext,
    VolumeInfo,
    VolumeType,
)
from openkeel.volume.embedded import migration
from openkeel.volume.embedded.faults import NotFound, OverLimit, SnapshotMissing, VolumeFault
from openkeel.volume.embedded.files import VolumeFiles
from openkeel.volume.embedded.service import (
    Caller,
    ImageCopy,
    ImageSource,
    NovaEvents,
    Row,
    VolumeService,
)
from openkeel.volume.errors import (
    AttachmentNotFound,
    ImageNotFound,
    InvalidVolume,
    SnapshotNotFound,
    VolumeNotFound,
    VolumeOverQuota,
    VolumeServiceError,
)

T = TypeVar("T")


def _stamp(value: datetime.datetime | None) -> str | None:
    return None if value is None else value.isoformat(timespec="microseconds")


def _caller(context: VolumeContext) -> Caller:
    return Caller(context.project_id, context.user_id or "", context.is_admin)


class EmbeddedVolumes:
    """:class:`openkeel.volume.adapter.VolumeAdapter` over :class:`VolumeService`."""

    def __init__(
        self, api_db: sa.Engine, state_path: str, images: ImageSource | None = None
    ) -> None:
        store = VolumeStore(api_db)
        store.install()
        self._images = images
        files = VolumeFiles(Path(state_path) / "volumes")
        self.service = VolumeService(store, files, self._image)

    def use_images(self, images: ImageSource) -> None:
        """Where volumes made from an image (boot from volume) read it; the composition
        root says, once the image service is known."""
        self._images = images

    def _image(self, caller: Caller, image_id: str) -> ImageCopy | None:
        return self._images(caller, image_id) if self._images is not None else None

    def _run(self, call: Callable[[], T], missing: Exception) -> T:
        try:
            return call()
        except SnapshotMissing as exc:
            raise SnapshotNotFound(exc.ident) from exc
        except NotFound as exc:
            raise missing from exc
        except OverLimit as exc:
            raise VolumeOverQuota(exc.message) from exc
        except VolumeFault as exc:
            if exc.status == 400:
                raise InvalidVolume(exc.message) from exc
            raise VolumeServiceError(exc.message) from exc

    def get(self, context: VolumeContext, volume_id: str) -> VolumeInfo:
        row = self._run(lambda: self.service.volume(_caller(context), volume_id),
                        VolumeNotFound(volume_id))  # fmt: skip
        return self._info(row)

    def _info(self, row: Row) -> VolumeInfo:
        attachments = tuple(
            AttachmentInfo(a["instance_uuid"], str(a["id"]), a["mountpoint"])
            for a in self.service.attachments_of(row["id"])
        )
        return VolumeInfo(
            id=row["id"], status=row["status"], size=row["size"],
            multiattach=bool(row["multiattach"]), availability_zone=row["availability_zone"],
            bootable=bool(row["bootable"]), attachments=attachments, name=row["name"],
            description=row["description"], created_at=_stamp(row["created_at"]),
            volume_type=self.service.types.name_of(row["volume_type_id"]),
            snapshot_id=row["snapshot_id"],
            metadata=dict(row["metadata"]), migration_status=row["migration_status"],
            image_id=(row["image_metadata"] or {}).get("image_id"),
        )  # fmt: skip

    def list_volumes(self, context: VolumeContext) -> list[VolumeInfo]:
        return [self._info(r) for r in self.service.visible(_caller(context), "volumes")]

    def create_volume(self, context: VolumeContext, wanted: NewVolume) -> VolumeInfo:
        ref = {
            "size": wanted.size, "name": wanted.name, "description": wanted.description,
            "snapshot_id": wanted.snapshot_id, "imageRef": wanted.image_id,
            "volume_type": wanted.volume_type,
            "metadata": wanted.metadata, "availability_zone": wanted.availability_zone,
        }  # fmt: skip

        def create() -> Row:
            try:
                return self.service.create_volume(_caller(context), ref)
            except SnapshotMissing:
                raise
            except NotFound as exc:  # the volume type: Cinder's 404, InvalidVolume as 0068's
                raise InvalidVolume(exc.message) from exc

        row = self._run(create, VolumeNotFound(""))
        return self._info(row)

    @staticmethod
    def _snapshot(row: Row) -> SnapshotInfo:
        return SnapshotInfo(
            id=row["id"], volume_id=row["volume_id"], status=row["status"], size=row["size"],
            created_at=_stamp(row["created_at"]), name=row["name"],
            description=row["description"],
        )  # fmt: skip

    def get_snapshot(self, context: VolumeContext, snapshot_id: str) -> SnapshotInfo:
        row = self._run(lambda: self.service.snapshot(_caller(context), snapshot_id),
                        SnapshotNotFound(snapshot_id))  # fmt: skip
        return self._snapshot(row)

    def list_snapshots(self, context: VolumeContext) -> list[SnapshotInfo]:
        return [self._snapshot(r) for r in self.service.visible(_caller(context), "snapshots")]

    def create_snapshot(
        self,
        context: VolumeContext,
        volume_id: str,
        name: str | None,
        description: str | None,
        force: bool,
    ) -> SnapshotInfo:
        ref = {"volume_id": volume_id, "name": name, "description": description, "force": force}
        row = self._run(lambda: self.service.create_snapshot(_caller(context), ref),
                        VolumeNotFound(volume_id))  # fmt: skip
        return self._snapshot(row)

    def delete_snapshot(self, context: VolumeContext, snapshot_id: str) -> None:
        self._run(lambda: self.service.delete_snapshot(_caller(context), snapshot_id),
                  SnapshotNotFound(snapshot_id))  # fmt: skip

    def attachment_create(self, context: VolumeContext, volume_id: str, instance_uuid: str) -> str:
        row = self._run(
            lambda: self.service.create_attachment(_caller(context), volume_id, instance_uuid),
            VolumeNotFound(volume_id),
        )
        return str(row["id"])

    def attachment_create_connected(
        self,
        context: VolumeContext,
        volume_id: str,
        instance_uuid: str,
        connector: Mapping[str, Any],
    ) -> tuple[str, dict[str, Any]]:
        made = self.attachment_create(context, volume_id, instance_uuid)
        try:
            return made, self.attachment_update(context, made, connector)
        except BaseException:
            self.attachment_delete(context, made)
            raise

    def attachment_update(
        self, context: VolumeContext, attachment_id: str, connector: Mapping[str, Any]
    ) -> dict[str, Any]:
        row = self._run(
            lambda: self.service.update_attachment(_caller(context), attachment_id, connector),
            AttachmentNotFound(attachment_id),
        )
        info = self.service.connection_info(row) or {}
        volume = self.service.store.get("volumes", row["volume_id"])
        if info and volume is not None and volume["multiattach"]:
            info["multiattach"] = True  # as Nova's compute adds it (the driver shares the disk)
        return info

    def attachment_complete(self, context: VolumeContext, attachment_id: str) -> None:
        self._run(lambda: self.service.complete_attachment(_caller(context), attachment_id),
                  AttachmentNotFound(attachment_id))  # fmt: skip

    def attachment_delete(self, context: VolumeContext, attachment_id: str) -> None:
        try:
            self.service.delete_attachment(_caller(context), attachment_id)
        except NotFound:
            return

    def begin_detaching(self, context: VolumeContext, volume_id: str) -> None:
        self._run(lambda: self.service.begin_detaching(_caller(context), volume_id),
                  VolumeNotFound(volume_id))  # fmt: skip

    def roll_detaching(self, context: VolumeContext, volume_id: str) -> None:
        self._run(lambda: self.service.roll_detaching(_caller(context), volume_id),
                  VolumeNotFound(volume_id))  # fmt: skip

    def reimage(
        self, context: VolumeContext, volume_id: str, image_id: str, reimage_reserved: bool
    ) -> None:
        caller = _caller(context)

        def reimage() -> None:
            try:
                self.service.reimage(caller, volume_id, image_id, reimage_reserved)
            except NotFound as exc:
                if exc.message.startswith("Image "):
                    raise ImageNotFound(image_id) from exc
                raise

        self._run(reimage, VolumeNotFound(volume_id))

    def send_events_with(self, nova: NovaEvents) -> None:
        """Where the service reports ``volume-reimaged`` (the compute API's external events);
        the composition root says, as for the images."""
        self.service.nova = nova

    def volume_types(self, context: VolumeContext) -> list[VolumeType]:
        return [VolumeType(str(t["id"]), str(t["name"]))
                for t in self.service.types.visible(context.is_admin)]  # fmt: skip

    def delete(self, context: VolumeContext, volume_id: str) -> None:
        self._run(lambda: self.service.delete_volume(_caller(context), volume_id),
                  VolumeNotFound(volume_id))  # fmt: skip

    def migrate_volume_completion(
        self, context: VolumeContext, old_volume_id: str, new_volume_id: str, error: bool
    ) -> str:
        caller = _caller(context)
        return self._run(
            lambda: migration.complete(self.service, caller, old_volume_id, new_volume_id, error),
            VolumeNotFound(old_volume_id),
        )
