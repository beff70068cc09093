"""The volume adapter interface: what Nova's side (the compute API and compute hosts) asks of
Cinder, in Nova's ``nova.volume.cinder.API`` terms, trimmed to what OpenKeel uses.

Implementations: :class:`openkeel.volume.embedded.adapter.EmbeddedVolumes` (the all-in-one's
volume service in process) and :class:`openkeel.volume.cinder.CinderVolumes` (a real Cinder's
v3 REST API). Every call acts for the user in ``VolumeContext``; errors are
:mod:`openkeel.volume.errors`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True)
class VolumeContext:
    """Who Cinder is asked for (the user's project and roles; the user's token, which a real
    Cinder is called with, as Nova does; without one, an admin context uses ``[cinder]``'s
    service user)."""

    project_id: str | None
    user_id: str | None = None
    is_admin: bool = False
    auth_token: str | None = field(default=None, repr=False)


@dataclass(frozen=True)
class AttachmentInfo:
    """One attachment of a volume, as Cinder's volume document shows it."""

    server_id: str | None
    attachment_id: str
    device: str | None = None


@dataclass(frozen=True)
class VolumeInfo:
    """What Nova reads of a volume."""

    id: str
    status: str
    size: int
    multiattach: bool
    availability_zone: str
    bootable: bool = False
    attachments: tuple[AttachmentInfo, ...] = ()
    name: str | None = None
    description: str | None = None
    created_at: str | None = None
    volume_type: str | None = None
    snapshot_id: str | None = None
    metadata: Mapping[str, str] = field(default_factory=dict)
    #: Cinder's: None, or where a migration of the volume is (``migrating``, ``success``...).
    migration_status: str | None = None
    image_id: str | None = None  # volume_image_metadata's image_id (made from an image)


@dataclass(frozen=True)
class SnapshotInfo:
    """What Nova reads of a volume snapshot."""

    id: str
    volume_id: str
    status: str
    size: int
    created_at: str | None = None
    name: str | None = None
    description: str | None = None


@dataclass(frozen=True)
class VolumeType:
    """A volume type (Nova's create checks a mapping's ``volume_type`` by id or name)."""

    id: str
    name: str


@dataclass(frozen=True)
class NewVolume:
    """A volume to create (the ``os-volumes`` proxy; compute for boot from volume)."""

    size: int | None
    name: str | None = None
    description: str | None = None
    snapshot_id: str | None = None
    image_id: str | None = None  # Cinder's imageRef: a bootable volume with the image's data
    volume_type: str | None = None
    metadata: Mapping[str, str] | None = None
    availability_zone: str | None = None


class VolumeAdapter(Protocol):
    """Cinder as Nova uses it (the attachments API, 3.44+)."""

    def get(self, context: VolumeContext, volume_id: str) -> VolumeInfo:
        """The volume (VolumeNotFound)."""
        ...

    def attachment_create(self, context: VolumeContext, volume_id: str, instance_uuid: str) -> str:
        """Reserve the volume for the instance; the attachment id (InvalidVolume when the
        volume cannot be attached: in use and not multiattach, being deleted, ...)."""
        ...

    def attachment_create_connected(
        self,
        context: VolumeContext,
        volume_id: str,
        instance_uuid: str,
        connector: Mapping[str, Any],
    ) -> tuple[str, dict[str, Any]]:
        """An attachment made with the host's connector in the one call (Nova's live migration
        destination): its id and connection info (as :meth:`attachment_update`'s). Cinder
        refuses an update of a non-multiattach volume's attachment while another one of it is
        connected ("duplicate connectors"); a create with the connector is not checked so."""
        ...

    def attachment_update(
        self, context: VolumeContext, attachment_id: str, connector: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Give the host's connector; the connection info the host attaches with, with
        ``multiattach: True`` when the volume is (Nova's block device layer adds it so the
        driver shares the disk between guests)."""
        ...

    def attachment_complete(self, context: VolumeContext, attachment_id: str) -> None:
        """The host attached it: the volume is in-use."""
        ...

    def attachment_delete(self, context: VolumeContext, attachment_id: str) -> None:
        """Remove the attachment (the volume is available again when it was the last);
        succeeds when it is gone already."""
        ...

    def begin_detaching(self, context: VolumeContext, volume_id: str) -> None:
        """Mark an in-use volume detaching (InvalidVolume otherwise)."""
        ...

    def roll_detaching(self, context: VolumeContext, volume_id: str) -> None:
        """A failed detach: the volume is in-use again."""
        ...

    def delete(self, context: VolumeContext, volume_id: str) -> None:
        """Delete the volume (a server's ``delete_on_termination``)."""
        ...

    def migrate_volume_completion(
        self, context: VolumeContext, old_volume_id: str, new_volume_id: str, error: bool
    ) -> str:
        """A host swapped ``old`` for ``new`` (or failed to: ``error``) while Cinder migrates
        the old one; the id the server's mapping keeps (Cinder's ``save_volume_id``)."""
        ...

    def reimage(
        self, context: VolumeContext, volume_id: str, image_id: str, reimage_reserved: bool
    ) -> None:
        """Cinder's ``os-reimage`` (3.68): rewrite the volume from the image; Cinder sends the
        ``volume-reimaged`` event to Nova when it is done with a reserved volume (Nova's
        ``reimage_volume``; VolumeNotFound, InvalidVolume, VolumeServiceError)."""
        ...

    def volume_types(self, context: VolumeContext) -> list[VolumeType]:
        """The volume types the user may use (Nova's get_all_volume_types)."""
        ...

    def list_volumes(self, context: VolumeContext) -> list[VolumeInfo]:
        """The project's volumes."""
        ...

    def create_volume(self, context: VolumeContext, wanted: NewVolume) -> VolumeInfo:
        """A new volume (InvalidVolume, OverQuota, SnapshotNotFound)."""
        ...

    def get_snapshot(self, context: VolumeContext, snapshot_id: str) -> SnapshotInfo:
        """The snapshot (SnapshotNotFound)."""
        ...

    def list_snapshots(self, context: VolumeContext) -> list[SnapshotInfo]:
        """The project's snapshots."""
        ...

    def create_snapshot(
        self,
        context: VolumeContext,
        volume_id: str,
        name: str | None,
        description: str | None,
        force: bool,
    ) -> SnapshotInfo:
        """A snapshot of the volume (``force``: also of an in-use one)."""
        ...

    def delete_snapshot(self, context: VolumeContext, snapshot_id: str) -> None:
        """Delete the snapshot (SnapshotNotFound)."""
        ...
