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
from openkeel.volume.errors import InvalidVolume, SnapshotNotFound, VolumeNotFound

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
