"""Archiving and purging soft-deleted rows (``nova-manage db archive_deleted_rows`` / ``purge``).

``archive_batch`` moves up to ``max_rows`` soft-deleted rows of one cell database into the
``shadow_<table>`` copies, table by table in dependency order (parents first). Rows of other
tables that reference an archived row through a foreign key go with it (an instance takes its
``instance_extra``, info cache, actions and their events ...), as Nova does; referencing tables
without a shadow copy (tags, console auth tokens, share mappings) lose those rows. ``task_log``
rows are archived only when asked, all of them (they are never soft-deleted).

``forget_instances`` removes from the API database what archived instances left there
(instance mappings, request specs, server group members, build requests). ``purge`` deletes
rows of the shadow tables. ``openkeel.cmd.manage_db`` adds the CLI.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from openkeel.db.schema import api as api_schema
from openkeel.db.schema import cell as cell_schema
from openkeel.db.schema.shadow import SHADOW_PREFIX, shadow_name

TASK_LOG = "task_log"
# Shadow tables whose age is not their deleted_at (Nova's purge overrides).
PURGE_AGE_COLUMN = {
    "shadow_instance_actions": "created_at",
    "shadow_instance_actions_events": "created_at",
    "shadow_task_log": "updated_at",
}


@dataclass
class ArchiveBatch:
    """What one pass archived: rows per table (referencing rows included) and the UUIDs of
    the archived instances."""

    tables: dict[str, int] = field(default_factory=dict)
    instance_uuids: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(self.tables.values())

    def add(self, table: str, count: int) -> None:
        if count:
            self.tables[table] = self.tables.get(table, 0) + count


def archivable_tables() -> list[sa.Table]:
    """Live cell tables that have a shadow copy, parents before the tables referencing them."""
    tables = cell_schema.metadata.tables
    return [
        table
        for table in cell_schema.metadata.sorted_tables
        if not table.name.startswith(SHADOW_PREFIX)
        and shadow_name(table.name) in tables
        and "deleted" in table.c
    ]


def archive_batch(
    engine: sa.Engine,
    max_rows: int,
    *,
    before: datetime.datetime | None = None,
    task_log: bool = False,
) -> ArchiveBatch:
    """Archive up to ``max_rows`` soft-deleted rows (a soft limit: referencing rows go along)."""
    batch = ArchiveBatch()
    for table in archivable_tables():
        room = max_rows - batch.total
        if room <= 0:
            break
        ids = _archivable_ids(engine, table, room, before, task_log)
        if not ids:
            continue
        with engine.begin() as connection:
            if table.name == "instances":
                uuids = sa.select(table.c.uuid).where(table.c.id.in_(ids))
                batch.instance_uuids += list(connection.execute(uuids).scalars())
            _move(connection, table, table.c.id.in_(ids), batch)
    return batch


def forget_instances(api: sa.Engine, instance_uuids: Iterable[str]) -> dict[str, int]:
    """Delete the API-database rows of archived instances; rows deleted per table
    (``API_DB.<table>`` as nova-manage reports them; build requests go unreported as in Nova)."""
    uuids = list(instance_uuids)
    counts: dict[str, int] = {}
    if not uuids:
        return counts
    with api.begin() as connection:
        for table in (
            api_schema.instance_mappings,
            api_schema.request_specs,
            api_schema.instance_group_member,
        ):
            result = connection.execute(sa.delete(table).where(table.c.instance_uuid.in_(uuids)))
            counts[f"API_DB.{table.name}"] = result.rowcount
        build_requests = api_schema.build_requests
        connection.execute(
            sa.delete(build_requests).where(build_requests.c.instance_uuid.in_(uuids))
        )
    return counts


def purge(
    engine: sa.Engine,
    before: datetime.datetime | None,
    report: Callable[[str], None] = lambda _: None,
) -> int:
    """Delete the shadow tables' rows (older than ``before`` when given); how many."""
    deleted = 0
    for table in cell_schema.metadata.sorted_tables:
        if not table.name.startswith(SHADOW_PREFIX):
            continue
        column = _age_column(table) if before is not None else None
        if before is not None and column is None:
            report(f"Unable to purge table {table.name} because it has no timestamp column")
            continue
        statement = sa.delete(table)
        if column is not None:
            statement = statement.where(column < before)
        with engine.begin() as connection:
            count = connection.execute(statement).rowcount
        if count > 0:
            name = "(n/a)" if column is None else column.name
            report(f"Deleted {count} rows from {table.name} based on timestamp column {name}")
        deleted += count
    return deleted


def _age_column(table: sa.Table) -> sa.Column[datetime.datetime] | None:
    name = PURGE_AGE_COLUMN.get(table.name)
    if name is None:
        name = next((c for c in ("deleted_at", "updated_at", "created_at") if c in table.c), None)
    return None if name is None else table.c[name]


def _archivable_ids(
    engine: sa.Engine,
    table: sa.Table,
    limit: int,
    before: datetime.datetime | None,
    task_log: bool,
) -> list[int]:
    query = sa.select(table.c.id)
    if table.name == TASK_LOG:
        if not task_log:
            return []
        if before is not None:
            query = query.where(table.c.updated_at < before)
    else:
        query = query.where(table.c.deleted != 0)
        if before is not None:
            query = query.where(table.c.deleted_at < before)
    with engine.connect() as connection:
        return list(connection.execute(query.order_by(table.c.id).limit(limit)).scalars())


def _move(
    connection: sa.Connection,
    table: sa.Table,
    where: sa.ColumnElement[bool],
    batch: ArchiveBatch,
) -> None:
    """Move ``table``'s rows matching ``where`` to its shadow copy, referencing rows first."""
    for child, fk in _referencing(table):
        keys = sa.select(fk.column).where(where).scalar_subquery()
        child_where = fk.parent.in_(keys)
        if shadow_name(child.name) in cell_schema.metadata.tables:
            _move(connection, child, child_where, batch)
        else:
            connection.execute(sa.delete(child).where(child_where))
    shadow = cell_schema.metadata.tables[shadow_name(table.name)]
    columns = [column.name for column in table.c]
    cast = connection.dialect.name == "postgresql"
    values = [_as_shadow(column, shadow.c[column.name]) if cast else column for column in table.c]
    connection.execute(sa.insert(shadow).from_select(columns, sa.select(*values).where(where)))
    batch.add(table.name, connection.execute(sa.delete(table).where(where)).rowcount)


def _as_shadow(column: sa.Column[Any], shadow: sa.Column[Any]) -> sa.ColumnElement[Any]:
    """``column`` as the shadow column's type on PostgreSQL, which names each enum type after
    its table (``migration_type`` vs ``shadow_migration_type``): enums go through text."""
    if isinstance(column.type, sa.Enum):
        return sa.cast(sa.cast(column, sa.String(255)), shadow.type).label(column.name)
    return column


def _referencing(table: sa.Table) -> list[tuple[sa.Table, sa.ForeignKey]]:
    """Live tables with a foreign key to ``table`` (never a shadow table)."""
    found = []
    for other in cell_schema.metadata.sorted_tables:
        if other.name.startswith(SHADOW_PREFIX) or other is table:
            continue
        found += [(other, fk) for fk in other.foreign_keys if fk.column.table is table]
    return found
