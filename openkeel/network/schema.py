"""The embedded flat network's address table (API database, ``openkeel_fixed_ips``).

A flat network spans every cell, so its allocations live in the API database, one row per
allocated address; the unique constraint on (network_id, address) makes concurrent allocations
safe across processes. Created by ``ensure_schema`` (not part of Nova's schema; a migration in
the API tree is the follow-up, see the compute owner's report).
"""

from __future__ import annotations

import sqlalchemy as sa

from openkeel.db.lazy_tables import create_missing

metadata = sa.MetaData()

fixed_ips = sa.Table(
    "openkeel_fixed_ips",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("network_id", sa.String(36), nullable=False),
    sa.Column("address", sa.String(39), nullable=False),
    sa.Column("instance_uuid", sa.String(36), nullable=False),
    sa.Column("port_id", sa.String(36), nullable=False),
    sa.Column("mac_address", sa.String(17), nullable=False),
    sa.Column("tag", sa.String(255)),
    sa.Column("created_at", sa.DateTime),
    sa.UniqueConstraint("network_id", "address", name="uniq_openkeel_fixed_ips0network0address"),
    sa.Index("openkeel_fixed_ips_instance_uuid_idx", "instance_uuid"),
)


def ensure_schema(engine: sa.Engine) -> None:
    """Create the table if it does not exist yet."""
    create_missing(engine, metadata)
