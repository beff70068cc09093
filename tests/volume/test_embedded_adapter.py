"""The volume adapter over the embedded volume service: Nova's errors for what the service
refuses, and the compare-and-swap that lets one attachment of a volume win a race."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
import sqlalchemy as sa

from openkeel.domain.errors import Invalid, NotFound, OverQuota
from openkeel.volume.adapter import NewVolume, VolumeContext
from openkeel.volume.embedded.adapter import EmbeddedVolumes
from openkeel.volume.embedded.service import ImageCopy
from openkeel.volume.errors import ImageNotFound, InvalidVolume, SnapshotNotFound, VolumeNotFound

DEMO = VolumeContext("demo", "demo")
OTHER = VolumeContext("other", "other")
SERVER = "0b1f5c6e-8f0a-4f57-9a55-3c2a8d6b7e01"


@pytest.fixture
def volumes(tmp_path: Path) -> EmbeddedVolumes:
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'api.db'}")
    return EmbeddedVolumes(engine, str(tmp_path))


def test_errors_are_novas(volumes: EmbeddedVolumes) -> None:
    with pytest.raises(VolumeNotFound, match=r"Volume nope could not be found\."):
        volumes.get(DEMO, "nope")
    made = volumes.create_volume(DEMO, NewVolume(size=1, name="v"))
    with pytest.raises(VolumeNotFound):
        volumes.get(OTHER, made.id)
    with pytest.raises(SnapshotNotFound, match=r"Snapshot gone could not be found\."):
        volumes.create_volume(DEMO, NewVolume(size=1, snapshot_id="gone"))
    with pytest.raises(OverQuota, match="VolumeSizeExceedsAvailableQuota"):
        volumes.create_volume(DEMO, NewVolume(size=5000))
    volumes.attachment_create(DEMO, made.id, SERVER)
    with pytest.raises(InvalidVolume, match=r"^Invalid input received: .* \(HTTP 400\)$"):
        volumes.attachment_create(DEMO, made.id, SERVER)
    with pytest.raises(Invalid):
        volumes.delete(DEMO, made.id)
    assert isinstance(VolumeNotFound("x"), NotFound)


def test_attachment_steps_and_statuses(volumes: EmbeddedVolumes) -> None:
    made = volumes.create_volume(DEMO, NewVolume(size=1))
    attachment = volumes.attachment_create(DEMO, made.id, SERVER)
    assert volumes.get(DEMO, made.id).status == "reserved"
    info = volumes.attachment_update(DEMO, attachment, {"host": "h1", "mountpoint": "/dev/vdb"})
    assert info["driver_volume_type"] == "local" and info["data"]["volume_id"] == made.id
    volumes.attachment_complete(DEMO, attachment)
    shown = volumes.get(DEMO, made.id)
    assert shown.status == "in-use" and shown.attachments[0].device == "/dev/vdb"
    volumes.begin_detaching(DEMO, made.id)
    volumes.roll_detaching(DEMO, made.id)
    assert volumes.get(DEMO, made.id).status == "in-use"
    volumes.attachment_delete(DEMO, attachment)
    volumes.attachment_delete(DEMO, attachment)  # gone already: fine
    assert volumes.get(DEMO, made.id).status == "available"
    volumes.delete(DEMO, made.id)
    with pytest.raises(VolumeNotFound):
        volumes.get(DEMO, made.id)


def test_a_kubevirt_host_is_answered_with_the_claim(volumes: EmbeddedVolumes) -> None:
    """A connector that says ``kubevirt`` (the KubeVirt driver's) gets the PVC the volume is in
    the server's namespace: a blank DataVolume of its size to make once (decision 0067)."""
    made = volumes.create_volume(DEMO, NewVolume(size=2))
    attachment = volumes.attachment_create(DEMO, made.id, SERVER)
    info = volumes.attachment_update(DEMO, attachment, {"host": "h1", "kubevirt": True})
    assert info["driver_volume_type"] == "kubevirt"
    assert info["data"] == {"volume_id": made.id, "access_mode": "rw",
                            "claim_name": f"volume-{made.id}", "claim_kind": "dataVolume",
                            "namespace": None, "size_gb": 2, "populate": {"blank": {}}}  # fmt: skip


def test_one_attachment_wins_a_race(volumes: EmbeddedVolumes) -> None:
    made = volumes.create_volume(DEMO, NewVolume(size=1))
    start = threading.Barrier(6)
    won: list[str] = []
    lost: list[Exception] = []

    def attach() -> None:
        start.wait()
        try:
            won.append(volumes.attachment_create(DEMO, made.id, SERVER))
        except InvalidVolume as exc:
            lost.append(exc)

    threads = [threading.Thread(target=attach) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(won) == 1 and len(lost) == 5
    assert len(volumes.service.attachments_of(made.id)) == 1


def test_reimage_errors_and_the_event_of_a_reserved_volume(volumes: EmbeddedVolumes) -> None:
    """An unknown image or volume is the adapter's NotFound, a refusal InvalidVolume (as the
    Cinder adapter answers); a reserved volume reimaged tells Nova, once per server."""
    data = {"9d6c3b1e-0000-4000-8000-000000000001": b"new"}
    volumes.use_images(lambda caller, image_id: ImageCopy(iter([data[image_id]]), 3, 0,
                                                          {"image_id": image_id})
                       if image_id in data else None)  # fmt: skip
    sent: list[tuple[str, str, str]] = []
    volumes.send_events_with(lambda *event: sent.append(event))
    made = volumes.create_volume(DEMO, NewVolume(size=1))
    (image,) = data
    with pytest.raises(ImageNotFound):
        volumes.reimage(DEMO, made.id, "9d6c3b1e-0000-4000-8000-00000000000f", False)
    with pytest.raises(VolumeNotFound):
        volumes.reimage(DEMO, "nope", image, False)
    volumes.reimage(DEMO, made.id, image, False)  # available: no server to tell
    assert volumes.get(DEMO, made.id).image_id == image and sent == []
    volumes.attachment_create(DEMO, made.id, SERVER)
    with pytest.raises(InvalidVolume, match="must be available or error"):
        volumes.reimage(DEMO, made.id, image, False)
    volumes.reimage(DEMO, made.id, image, True)
    assert sent == [(SERVER, "volume-reimaged", made.id)]
    assert volumes.get(DEMO, made.id).status == "reserved"
