"""SQL for migration records in a cell DB (``migrations``): create, update, get, find, list.

Used by the conductor (creates the record of a resize / cold migration), compute (advances its
status and destination) and the API (confirm/revert look up the ``finished`` migration;
``GET /os-migrations`` lists them).
"""

from __future__ import annotations

import uuid as uuidlib
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from openkeel.db.schema import cell as cell_schema
from openkeel.db.schema.columns import utcnow
from openkeel.db.softdelete import live
from openkeel.domain.migrations import Migration, MigrationNotFound, MigrationNotFoundByStatus

_M = cell_schema.migrations
_FIELDS = tuple(Migration.__dataclass_fields__)


def _to_migration(row: Any) -> Migration:
    values = {name: row[name] for name in _FIELDS}
    values["hidden"] = bool(values["hidden"])
    return Migration(**values)


def create(
    conn: sa.Connection,
    *,
    instance_uuid: str,
    migration_type: str,
    status: str,
    uuid: str | None = None,
    **fields: Any,
) -> Migration:
    """Insert a migration (a new uuid unless given) and return it."""
    unknown = set(fields) - set(_FIELDS)
    if unknown:
        raise TypeError(f"Unknown migration fields: {sorted(unknown)}")
    result = conn.execute(
        sa.insert(_M).values(
            uuid=uuid or str(uuidlib.uuid4()),
            instance_uuid=instance_uuid,
            migration_type=migration_type,
            status=status,
            hidden=False,
            cross_cell_move=False,
            created_at=utcnow(),
            deleted=0,
            **fields,
        )
    )
    pk = result.inserted_primary_key
    assert pk is not None
    return get(conn, int(pk[0]))


def get(conn: sa.Connection, migration_id: int) -> Migration:
    row = (
        conn.execute(sa.select(_M).where(_M.c.id == migration_id, _M.c.deleted == 0))
        .mappings()
        .first()
    )
    if row is None:
        raise MigrationNotFound(migration_id)
    return _to_migration(row)


def update(conn: sa.Connection, migration_id: int, **values: Any) -> Migration:
    """Set ``values`` (status, dest_compute, ...) on the migration."""
    unknown = set(values) - set(_FIELDS)
    if unknown:
        raise TypeError(f"Unknown migration fields: {sorted(unknown)}")
    done = conn.execute(
        sa.update(_M)
        .where(_M.c.id == migration_id, _M.c.deleted == 0)
        .values(updated_at=utcnow(), **values)
    )
    if done.rowcount == 0:
        raise MigrationNotFound(migration_id)
    return get(conn, migration_id)


def get_by_instance_and_status(conn: sa.Connection, instance_uuid: str, status: str) -> Migration:
    """The newest migration of the instance in ``status`` (MigrationNotFoundByStatus)."""
    row = (
        conn.execute(
            sa.select(_M)
            .where(_M.c.instance_uuid == instance_uuid, _M.c.status == status, _M.c.deleted == 0)
            .order_by(_M.c.id.desc())
            .limit(1)
        )
        .mappings()
        .first()
    )
    if row is None:
        raise MigrationNotFoundByStatus(instance_uuid, status)
    return _to_migration(row)


def find_by_uuid(conn: sa.Connection, migration_uuid: str) -> Migration | None:
    row = (
        conn.execute(sa.select(_M).where(_M.c.uuid == migration_uuid, _M.c.deleted == 0))
        .mappings()
        .first()
    )
    return None if row is None else _to_migration(row)


def list_migrations(
    conn: sa.Connection,
    *,
    instance_uuid: str | None = None,
    statuses: Sequence[str] = (),
    migration_types: Sequence[str] = (),
    host: str | None = None,
    project_id: str | None = None,
    user_id: str | None = None,
    changes_since: Any = None,
    changes_before: Any = None,
) -> list[Migration]:
    """Migrations matching every given filter, newest first (``deleted`` ones included only
    through the instance's soft delete, as Nova lists them for admins)."""
    query = sa.select(_M).where(_M.c.hidden.is_(False) | _M.c.hidden.is_(None))
    if instance_uuid is not None:
        query = query.where(_M.c.instance_uuid == instance_uuid)
    if statuses:
        query = query.where(_M.c.status.in_(list(statuses)))
    if migration_types:
        query = query.where(_M.c.migration_type.in_(list(migration_types)))
    if host is not None:
        query = query.where((_M.c.source_compute == host) | (_M.c.dest_compute == host))
    if project_id is not None:
        query = query.where(_M.c.project_id == project_id)
    if user_id is not None:
        query = query.where(_M.c.user_id == user_id)
    if changes_since is not None:
        query = query.where(sa.func.coalesce(_M.c.updated_at, _M.c.created_at) >= changes_since)
    if changes_before is not None:
        query = query.where(sa.func.coalesce(_M.c.updated_at, _M.c.created_at) <= changes_before)
    query = query.order_by(_M.c.created_at.desc(), _M.c.id.desc())
    return [_to_migration(row) for row in conn.execute(query).mappings()]


_UNFINISHED_EXCLUDED = (
    "confirmed",
    "reverted",
    "error",
    "failed",
    "completed",
    "cancelled",
    "done",
)


def hosts_of_unfinished(conn: sa.Connection, instance_uuid: str) -> set[str]:
    """Source and destination hosts of the instance's migrations still under way (what
    Nova reads from the instance's migration context)."""
    query = sa.select(_M.c.source_compute, _M.c.dest_compute).where(
        _M.c.instance_uuid == instance_uuid,
        live(_M),
        _M.c.status.not_in(_UNFINISHED_EXCLUDED),
    )
    return {h for row in conn.execute(query) for h in row if h}
