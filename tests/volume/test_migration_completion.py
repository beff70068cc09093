"""Cinder's migrate_volume_completion in the embedded volume service: nothing migrating (the
new id is kept), a migration that succeeded (the ids swap: the old id takes the new volume's
data, size and attachment) or failed (the target goes, the old volume stays); and the
``migration_status`` column added to a table made before it existed."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa

from openkeel.db.volume_tables import volumes_table
from openkeel.volume.adapter import NewVolume, VolumeContext
from openkeel.volume.embedded.adapter import EmbeddedVolumes
from openkeel.volume.embedded.service import Caller

ADMIN = VolumeContext("demo", "admin", is_admin=True)
SERVER = "0b1f5c6e-8f0a-4f57-9a55-3c2a8d6b7e01"


@pytest.fixture
def volumes(tmp_path: Path) -> EmbeddedVolumes:
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'api.db'}")
    return EmbeddedVolumes(engine, str(tmp_path))


def _attached(volumes: EmbeddedVolumes, size: int) -> tuple[str, str]:
    vid = volumes.create_volume(ADMIN, NewVolume(size=size)).id
    attachment = volumes.attachment_create(ADMIN, vid, SERVER)
    volumes.attachment_update(ADMIN, attachment, {"host": "h", "mountpoint": "/dev/vdb"})
    volumes.attachment_complete(ADMIN, attachment)
    return vid, attachment


def _migrating(volumes: EmbeddedVolumes, vid: str, status: str | None) -> None:
    caller = Caller("demo", "admin", True)
    volumes.service.reset_status(caller, "volumes", vid, {"migration_status": status})


def test_not_migrating_keeps_the_new_id(volumes: EmbeddedVolumes) -> None:
    old, _ = _attached(volumes, 1)
    new = volumes.create_volume(ADMIN, NewVolume(size=1)).id
    assert volumes.migrate_volume_completion(ADMIN, old, new, error=False) == new
    assert volumes.migrate_volume_completion(ADMIN, old, new, error=True) == old
    assert volumes.get(ADMIN, new).status == "available"


def test_a_finished_migration_swaps_the_ids(volumes: EmbeddedVolumes) -> None:
    old, old_attachment = _attached(volumes, 1)
    _migrating(volumes, old, "migrating")
    new, new_attachment = _attached(volumes, 2)
    volumes.service.files.path(new).write_bytes(b"copied")
    volumes.attachment_delete(ADMIN, old_attachment)
    assert volumes.migrate_volume_completion(ADMIN, old, new, error=False) == old
    kept = volumes.get(ADMIN, old)
    assert (kept.status, kept.size, kept.migration_status) == ("in-use", 2, "success")
    assert [a.attachment_id for a in kept.attachments] == [new_attachment]
    assert volumes.service.files.path(old).read_bytes() == b"copied"
    assert volumes.service.store.get("volumes", new) is None


def test_a_failed_migration_drops_the_target(volumes: EmbeddedVolumes) -> None:
    old, _ = _attached(volumes, 1)
    _migrating(volumes, old, "migrating")
    new = volumes.create_volume(ADMIN, NewVolume(size=1)).id
    assert volumes.migrate_volume_completion(ADMIN, old, new, error=True) == old
    kept = volumes.get(ADMIN, old)
    assert (kept.status, kept.migration_status) == ("in-use", "error")
    assert volumes.service.store.get("volumes", new) is None


def test_the_column_is_added_to_an_older_table(tmp_path: Path) -> None:
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'old.db'}")
    older = sa.MetaData()
    columns = [c._copy() for c in volumes_table.columns if c.name != "migration_status"]
    sa.Table(volumes_table.name, older, *columns)
    older.create_all(engine)
    volumes = EmbeddedVolumes(engine, str(tmp_path))
    vid = volumes.create_volume(ADMIN, NewVolume(size=1)).id
    assert volumes.get(ADMIN, vid).migration_status is None
