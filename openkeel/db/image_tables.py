"""Tables of the embedded image service and their conversion to :class:`Image` values.

``openkeel_images`` (one row per image, custom properties and tags as JSON text) and
``openkeel_image_members`` (who a shared image is shared with) live in the API database, in their
own MetaData outside Nova's schema (decisions 0008 and 0034). Used by the catalog the compute API
reads (:mod:`openkeel.db.image_catalog`) and the repository the image API writes through
(:mod:`openkeel.db.image_repository`). :func:`install_tables` creates them, and adds the columns a
data directory from before the image API lacks.
"""

from __future__ import annotations

import datetime
import json
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import mysql

from openkeel.clients.image import Image
from openkeel.db.lazy_tables import schema_lock

# Time stamps keep microseconds (MariaDB/MySQL: DATETIME(6)), so that images made within one
# second still sort in the order they were made (a backup rotation, Glance's created_at
# sort); the API shows whole seconds, as Glance does.
Stamp = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb")

metadata = sa.MetaData()
images_table = sa.Table(
    "openkeel_images",
    metadata,
    sa.Column("id", sa.String(36), primary_key=True),
    sa.Column("name", sa.String(255)),
    sa.Column("status", sa.String(30), nullable=False),
    sa.Column("visibility", sa.String(20), nullable=False),
    sa.Column("owner", sa.String(255)),
    sa.Column("min_ram", sa.Integer, nullable=False, default=0),
    sa.Column("min_disk", sa.Integer, nullable=False, default=0),
    sa.Column("size", sa.BigInteger),
    sa.Column("checksum", sa.String(32)),
    sa.Column("container_format", sa.String(32)),
    sa.Column("disk_format", sa.String(32)),
    sa.Column("protected", sa.Boolean, nullable=False, default=False),
    sa.Column("created_at", Stamp, nullable=False),
    sa.Column("updated_at", Stamp, nullable=False),
    sa.Column("properties", sa.Text, nullable=False, default="{}"),
    # Added with the image API (decision 0034); nullable so old tables take them as they are.
    sa.Column("tags", sa.Text),
    sa.Column("os_hidden", sa.Boolean),
    sa.Column("os_hash_algo", sa.String(64)),
    sa.Column("os_hash_value", sa.String(128)),
    sa.Column("virtual_size", sa.BigInteger),
)
members_table = sa.Table(
    "openkeel_image_members",
    metadata,
    sa.Column("image_id", sa.String(36), primary_key=True),
    sa.Column("member_id", sa.String(255), primary_key=True),
    sa.Column("status", sa.String(20), nullable=False),
    sa.Column("created_at", Stamp, nullable=False),
    sa.Column("updated_at", Stamp, nullable=False),
)


def now() -> datetime.datetime:
    """The time stamps the tables hold: naive UTC (views show whole seconds, as Glance)."""
    return datetime.datetime.now(datetime.UTC).replace(tzinfo=None)


def install_tables(engine: sa.Engine) -> bool:
    """Create missing tables and columns; True when ``openkeel_images`` was new."""
    with schema_lock(engine) as conn:  # processes starting together: one creates
        created = not sa.inspect(conn).has_table(images_table.name)
        metadata.create_all(conn, checkfirst=True)
        if not created:
            present = {c["name"] for c in sa.inspect(conn).get_columns(images_table.name)}
            for column in images_table.columns:
                if column.name not in present:
                    kind = column.type.compile(dialect=engine.dialect)
                    conn.execute(
                        sa.text(f"ALTER TABLE {images_table.name} ADD COLUMN {column.name} {kind}")
                    )
    return created


def row_values(image: Image) -> dict[str, Any]:
    """The row of ``image``."""
    return {
        "id": image.id,
        "name": image.name,
        "status": image.status,
        "visibility": image.visibility,
        "owner": image.owner,
        "min_ram": image.min_ram,
        "min_disk": image.min_disk,
        "size": image.size,
        "checksum": image.checksum,
        "container_format": image.container_format,
        "disk_format": image.disk_format,
        "protected": image.protected,
        "created_at": image.created_at,
        "updated_at": image.updated_at,
        "properties": json.dumps(image.properties),
        "tags": json.dumps(list(image.tags)),
        "os_hidden": image.os_hidden,
        "os_hash_algo": image.os_hash_algo,
        "os_hash_value": image.os_hash_value,
        "virtual_size": image.virtual_size,
    }


def image_of(row: sa.Row[Any]) -> Image:
    """The image a row holds."""
    values = dict(row._mapping)
    values["properties"] = json.loads(values["properties"])
    values["tags"] = tuple(json.loads(values["tags"] or "[]"))
    values["os_hidden"] = bool(values["os_hidden"])
    return Image(**values)
