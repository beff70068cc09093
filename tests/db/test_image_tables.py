"""The embedded image service's tables: a data directory from before the image API upgrades in
place (new nullable columns, the members table) and its images read as before."""

from __future__ import annotations

import datetime
from pathlib import Path

import sqlalchemy as sa

from openkeel.db.engine import make_engine
from openkeel.db.image_repository import ImageRepository
from openkeel.db.image_tables import install_tables, members_table

# openkeel_images as decision 0008 first created it.
OLD_COLUMNS = """
    id VARCHAR(36) PRIMARY KEY, name VARCHAR(255), status VARCHAR(30) NOT NULL,
    visibility VARCHAR(20) NOT NULL, owner VARCHAR(255), min_ram INTEGER NOT NULL,
    min_disk INTEGER NOT NULL, size BIGINT, checksum VARCHAR(32), container_format VARCHAR(32),
    disk_format VARCHAR(32), protected BOOLEAN NOT NULL, created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL, properties TEXT NOT NULL
"""


def test_old_table_gains_the_new_columns_and_keeps_its_rows(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'api.sqlite'}")
    stamp = datetime.datetime(2026, 1, 2, 3, 4, 5)
    with engine.begin() as conn:
        conn.execute(sa.text(f"CREATE TABLE openkeel_images ({OLD_COLUMNS})"))
        conn.execute(
            sa.text(
                "INSERT INTO openkeel_images VALUES ('i1', 'old', 'active', 'public', NULL, 0, 0,"
                " 5, NULL, 'bare', 'raw', 0, :t, :t, '{\"a\": \"b\"}')"
            ),
            {"t": stamp},
        )
    assert install_tables(engine) is False
    columns = {c["name"] for c in sa.inspect(engine).get_columns("openkeel_images")}
    assert {"tags", "os_hidden", "os_hash_algo", "os_hash_value", "virtual_size"} <= columns
    assert sa.inspect(engine).has_table(members_table.name)
    image = ImageRepository(engine).load("i1")
    assert (image.name, image.tags, image.os_hidden, image.properties) == (
        "old",
        (),
        False,
        {"a": "b"},
    )
    assert install_tables(engine) is False  # idempotent
