"""SQL behind availability zones: services of a cell DB and zone metadata of host aggregates.

Called by ``openkeel.api.usecases.availability_zones``.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable
from dataclasses import dataclass

import sqlalchemy as sa

from openkeel.db.schema import api as api_tables
from openkeel.db.schema import cell as cell_tables

AZ_KEY = "availability_zone"


@dataclass(frozen=True)
class ServiceRow:
    """The columns of a live ``services`` row that zones need."""

    host: str
    binary: str
    topic: str | None
    disabled: bool
    forced_down: bool
    last_seen_up: datetime.datetime | None
    created_at: datetime.datetime | None
    updated_at: datetime.datetime | None


def list_services(conn: sa.Connection) -> list[ServiceRow]:
    """Every live (not soft-deleted) service of one cell database."""
    table = cell_tables.services
    query = (
        sa.select(
            table.c.host,
            table.c.binary,
            table.c.topic,
            table.c.disabled,
            table.c.forced_down,
            table.c.last_seen_up,
            table.c.created_at,
            table.c.updated_at,
        )
        .where(table.c.deleted == 0)
        .order_by(table.c.id)
    )
    return [
        ServiceRow(
            host=row.host or "",
            binary=row.binary or "",
            topic=row.topic,
            disabled=bool(row.disabled),
            forced_down=bool(row.forced_down),
            last_seen_up=row.last_seen_up,
            created_at=row.created_at,
            updated_at=row.updated_at,
        )
        for row in conn.execute(query)
    ]


def zones_by_host(conn: sa.Connection, hosts: Iterable[str]) -> dict[str, set[str]]:
    """The ``availability_zone`` metadata values of the aggregates each host belongs to."""
    wanted = sorted(set(hosts))
    if not wanted:
        return {}
    members, meta = api_tables.aggregate_hosts, api_tables.aggregate_metadata
    query = (
        sa.select(members.c.host, meta.c.value)
        .select_from(members.join(meta, meta.c.aggregate_id == members.c.aggregate_id))
        .where(meta.c.key == AZ_KEY, members.c.host.in_(wanted))
    )
    zones: dict[str, set[str]] = {}
    for host, zone in conn.execute(query):
        zones.setdefault(host, set()).add(zone)
    return zones
