"""Errors of the volume adapters, with Nova's words for what Cinder answered (the API maps
them by class: unknown volume 404, a volume Cinder refuses 400)."""

from __future__ import annotations

from openkeel.domain.errors import Invalid, NotFound, OverQuota


class VolumeNotFound(NotFound):
    def __init__(self, volume_id: str) -> None:
        super().__init__(f"Volume {volume_id} could not be found.")


class SnapshotNotFound(NotFound):
    def __init__(self, snapshot_id: str) -> None:
        super().__init__(f"Snapshot {snapshot_id} could not be found.")


class ImageNotFound(NotFound):
    """Cinder's 404 for the image of a reimage."""

    def __init__(self, image_id: str) -> None:
        super().__init__(f"Image {image_id} could not be found.")


class VolumeOverQuota(OverQuota):
    """Cinder's 413: Nova's OverQuota (403) with Cinder's words."""


class AttachmentNotFound(NotFound):
    def __init__(self, attachment_id: str) -> None:
        super().__init__(f"Volume attachment {attachment_id} could not be found.")


class InvalidVolume(Invalid):
    """Cinder refused the request (its 400): Nova's InvalidInput wording."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"Invalid input received: {reason} (HTTP 400)")


class VolumeServiceError(Invalid):
    """Any other failure of the volume service."""
