"""The volume adapter over the embedded volume service, in process: the same rules and rows
the volume API serves, so a volume Nova attaches shows ``in-use`` in ``openstack volume
list``. Made once per API database (:mod:`openkeel.volume.factory`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import sqlalchemy as sa

from openkeel.db.volume_store import VolumeStore
from openkeel.volume.adapter import VolumeContext, VolumeInfo
from openkeel.volume.embedded.faults import NotFound, VolumeFault
from openkeel.volume.embedded.files import VolumeFiles
from openkeel.volume.embedded.service import Caller, VolumeService
from openkeel.volume.errors import (
    AttachmentNotFound,
    InvalidVolume,
    VolumeNotFound,
    VolumeServiceError,
)

T = TypeVar("T")


def _caller(context: VolumeContext) -> Caller:
    return Caller(context.project_id, context.user_id or "", context.is_admin)


class EmbeddedVolumes:
    """:class:`openkeel.volume.adapter.VolumeAdapter` over :class:`VolumeService`."""

    def __init__(self, api_db: sa.Engine, state_path: str) -> None:
        store = VolumeStore(api_db)
        store.install()
        self.service = VolumeService(store, VolumeFiles(Path(state_path) / "volumes"))

    def _run(self, call: Callable[[], T], missing: Exception) -> T:
        try:
            return call()
        except NotFound as exc:
            raise missing from exc
        except VolumeFault as exc:
            if exc.status == 400:
                raise InvalidVolume(exc.message) from exc
            raise VolumeServiceError(exc.message) from exc

    def get(self, context: VolumeContext, volume_id: str) -> VolumeInfo:
        row = self._run(lambda: self.service.volume(_caller(context), volume_id),
                        VolumeNotFound(volume_id))  # fmt: skip
        attachments = tuple(
            (a["instance_uuid"], str(a["id"])) for a in self.service.attachments_of(volume_id)
        )
        return VolumeInfo(
            id=row["id"], status=row["status"], size=row["size"],
            multiattach=bool(row["multiattach"]), availability_zone=row["availability_zone"],
            bootable=bool(row["bootable"]), attachments=attachments,
        )  # fmt: skip

    def attachment_create(self, context: VolumeContext, volume_id: str, instance_uuid: str) -> str:
        row = self._run(
            lambda: self.service.create_attachment(_caller(context), volume_id, instance_uuid),
            VolumeNotFound(volume_id),
        )
        return str(row["id"])

    def attachment_update(
        self, context: VolumeContext, attachment_id: str, connector: Mapping[str, Any]
    ) -> dict[str, Any]:
        row = self._run(
            lambda: self.service.update_attachment(_caller(context), attachment_id, connector),
            AttachmentNotFound(attachment_id),
        )
        return self.service.connection_info(row) or {}

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

    def delete(self, context: VolumeContext, volume_id: str) -> None:
        self._run(lambda: self.service.delete_volume(_caller(context), volume_id),
                  VolumeNotFound(volume_id))  # fmt: skip
