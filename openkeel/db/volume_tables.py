"""Tables of the embedded volume service (a Cinder v3 subset, decision 0057).

Volumes, snapshots, attachments and volume types: in the API database, in their own MetaData outside Nova's
schema (as the image, identity and network services' tables). Metadata documents are JSON
text. A volume's ``status`` changes only by compare-and-swap (see
:class:`openkeel.db.volume_store.VolumeStore`), so two attachments or a delete racing an
attachment cannot both win.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from openkeel.db.lazy_tables import create_missing, schema_lock

metadata = sa.MetaData()


def _common(*columns: sa.Column[Any]) -> list[sa.Column[Any]]:
    """What every volume service record has around its own columns."""
    return [
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("project_id", sa.String(255), nullable=False, index=True),
        sa.Column("user_id", sa.String(255), nullable=False, default=""),
        sa.Column("status", sa.String(32), nullable=False),
        *columns,
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("updated_at", sa.DateTime),
    ]


volumes_table = sa.Table(
    "openkeel_vol_volumes",
    metadata,
    *_common(
        sa.Column("name", sa.String(255)),
        sa.Column("description", sa.String(255)),
        sa.Column("size", sa.Integer, nullable=False),
        sa.Column("availability_zone", sa.String(255), nullable=False),
        sa.Column("volume_type_id", sa.String(36), nullable=False),
        sa.Column("snapshot_id", sa.String(36)),
        sa.Column("source_volid", sa.String(36)),
        sa.Column("image_id", sa.String(36)),
        sa.Column("bootable", sa.Boolean, nullable=False, default=False),
        sa.Column("multiattach", sa.Boolean, nullable=False, default=False),
        sa.Column("attach_status", sa.String(32), nullable=False, default="detached"),
        sa.Column("metadata", sa.Text, nullable=False, default="{}"),
        sa.Column("image_metadata", sa.Text, nullable=False, default="{}"),
        sa.Column("migration_status", sa.String(255)),
    ),
)
snapshots_table = sa.Table(
    "openkeel_vol_snapshots",
    metadata,
    *_common(
        sa.Column("name", sa.String(255)),
        sa.Column("description", sa.String(255)),
        sa.Column("volume_id", sa.String(36), nullable=False, index=True),
        sa.Column("size", sa.Integer, nullable=False),
        sa.Column("metadata", sa.Text, nullable=False, default="{}"),
    ),
)
attachments_table = sa.Table(
    "openkeel_vol_attachments",
    metadata,
    *_common(
        sa.Column("volume_id", sa.String(36), nullable=False, index=True),
        sa.Column("instance_uuid", sa.String(36), index=True),
        sa.Column("attach_mode", sa.String(8), nullable=False, default="rw"),
        sa.Column("connector", sa.Text, nullable=False, default="{}"),
        sa.Column("host_name", sa.String(255)),
        sa.Column("mountpoint", sa.String(255)),
        sa.Column("attached_at", sa.DateTime),
        sa.Column("detached_at", sa.DateTime),
    ),
)
types_table = sa.Table(
    "openkeel_vol_types",
    metadata,
    sa.Column("id", sa.String(36), primary_key=True),
    sa.Column("name", sa.String(255), nullable=False, unique=True),
    sa.Column("description", sa.String(255)),
    sa.Column("is_public", sa.Boolean, nullable=False, default=True),
    sa.Column("extra_specs", sa.Text, nullable=False, default="{}"),
    sa.Column("created_at", sa.DateTime, nullable=False),
    sa.Column("updated_at", sa.DateTime),
)


def install_tables(engine: sa.Engine) -> None:
    """Create the volume tables that are missing, and the columns added since a table was
    made (``migration_status``, issue 13's swap), under the schema lock."""
    create_missing(engine, metadata)
    if _has_column(engine, "migration_status"):
        return
    with schema_lock(engine) as conn:
        if not _has_column(conn, "migration_status"):
            conn.execute(sa.text(f"ALTER TABLE {volumes_table.name} "
                                 "ADD COLUMN migration_status VARCHAR(255)"))  # fmt: skip


def _has_column(bind: sa.Engine | sa.Connection, name: str) -> bool:
    return name in {c["name"] for c in sa.inspect(bind).get_columns(volumes_table.name)}
