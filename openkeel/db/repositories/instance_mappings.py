"""SQL for instance mappings (API DB ``instance_mappings``): which cell holds an instance.

The servers API creates the mapping with no cell when it accepts a build; conductor sets the
cell (the chosen host's cell, or cell0); compute marks it ``queued_for_delete`` on delete.
``openkeel.db.cell_router`` reads it to route a uuid to its cell database.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from openkeel.db.schema import api as api_schema
from openkeel.db.schema.columns import utcnow
from openkeel.domain.instances import InstanceMappingNotFound

_M = api_schema.instance_mappings
_CELLS = api_schema.cell_mappings


@dataclass(frozen=True)
class InstanceMapping:
    """One mapping; ``cell_uuid`` is None until conductor has placed the instance."""

    instance_uuid: str
    project_id: str
    user_id: str | None
    cell_id: int | None
    cell_uuid: str | None
    queued_for_delete: bool
    created_at: Any = None


def _select() -> sa.Select[Any]:
    return _SELECT


_SELECT = sa.select(_M, _CELLS.c.uuid.label("cell_uuid")).select_from(
    _M.outerjoin(_CELLS, _CELLS.c.id == _M.c.cell_id)
)
# The statements of every server create are built once (building costs more than running).
_GET_SQL = _SELECT.where(_M.c.instance_uuid == sa.bindparam("uuid"))
_CELL_ID_SQL = sa.select(_CELLS.c.id).where(_CELLS.c.uuid == sa.bindparam("cell_uuid"))
_INSERT_SQL = sa.insert(_M)
_SET_CELL_SQL = (
    sa.update(_M)
    .where(_M.c.instance_uuid == sa.bindparam("uuid"))
    .values(cell_id=sa.bindparam("new_cell_id"), updated_at=sa.bindparam("now"))
)


def _mapping(row: sa.RowMapping) -> InstanceMapping:
    return InstanceMapping(
        instance_uuid=row["instance_uuid"],
        project_id=row["project_id"],
        user_id=row["user_id"],
        cell_id=row["cell_id"],
        cell_uuid=row["cell_uuid"],
        queued_for_delete=bool(row["queued_for_delete"]),
        created_at=row["created_at"],
    )


def _cell_id(conn: sa.Connection, cell_uuid: str) -> int:
    cell_id = conn.execute(_CELL_ID_SQL, {"cell_uuid": cell_uuid}).scalar()
    if cell_id is None:
        raise ValueError(f"Cell {cell_uuid} has no mapping.")
    return int(cell_id)


def create(
    conn: sa.Connection,
    instance_uuid: str,
    project_id: str,
    user_id: str | None,
    *,
    cell_uuid: str | None = None,
) -> InstanceMapping:
    """Insert a mapping (``cell_uuid`` None: not scheduled yet)."""
    cell_id = _cell_id(conn, cell_uuid) if cell_uuid else None
    conn.execute(_INSERT_SQL, _row(instance_uuid, project_id, user_id, cell_id))
    return get(conn, instance_uuid)


def add_unscheduled(conn: sa.Connection, instances: Sequence[tuple[str, str, str | None]]) -> None:
    """Insert the cell-less mappings of (instance uuid, project id, user id) in one statement
    (``create`` for one that also reads it back)."""
    rows = [_row(uuid, project_id, user_id, None) for uuid, project_id, user_id in instances]
    if rows:
        conn.execute(_INSERT_SQL, rows)


def _row(uuid: str, project_id: str, user_id: str | None, cell_id: int | None) -> dict[str, Any]:
    return {
        "instance_uuid": uuid,
        "project_id": project_id,
        "user_id": user_id,
        "cell_id": cell_id,
        "queued_for_delete": False,
        "created_at": utcnow(),
    }


def get(conn: sa.Connection, instance_uuid: str) -> InstanceMapping:
    """The mapping; ``InstanceMappingNotFound`` (404) if there is none."""
    row = conn.execute(_GET_SQL, {"uuid": instance_uuid}).mappings().first()
    if row is None:
        raise InstanceMappingNotFound(instance_uuid)
    return _mapping(row)


def find(conn: sa.Connection, instance_uuid: str) -> InstanceMapping | None:
    """The mapping, or None if there is none (the server was deleted before scheduling)."""
    row = conn.execute(_GET_SQL, {"uuid": instance_uuid}).mappings().first()
    return None if row is None else _mapping(row)


def get_many(conn: sa.Connection, instance_uuids: Sequence[str]) -> dict[str, InstanceMapping]:
    """Mappings of several instances by uuid (missing ones left out)."""
    if not instance_uuids:
        return {}
    query = _select().where(_M.c.instance_uuid.in_(list(instance_uuids)))
    return {m.instance_uuid: m for m in map(_mapping, conn.execute(query).mappings())}


def set_cell(conn: sa.Connection, instance_uuid: str, cell_uuid: str) -> InstanceMapping:
    """Point the mapping at ``cell_uuid`` (conductor, once the instance row exists there)."""
    move_to_cell(conn, instance_uuid, cell_uuid)
    return get(conn, instance_uuid)


def move_to_cell(conn: sa.Connection, instance_uuid: str, cell_uuid: str) -> None:
    """``set_cell`` without reading the mapping back."""
    params = {"uuid": instance_uuid, "new_cell_id": _cell_id(conn, cell_uuid), "now": utcnow()}
    if conn.execute(_SET_CELL_SQL, params).rowcount == 0:
        raise InstanceMappingNotFound(instance_uuid)


def set_queued_for_delete(conn: sa.Connection, instance_uuid: str, queued: bool = True) -> None:
    result = conn.execute(
        sa.update(_M)
        .where(_M.c.instance_uuid == instance_uuid)
        .values(queued_for_delete=queued, updated_at=utcnow())
    )
    if result.rowcount == 0:
        raise InstanceMappingNotFound(instance_uuid)


def delete(conn: sa.Connection, instance_uuid: str) -> None:
    """Remove the mapping (a build deleted before it reached a cell)."""
    conn.execute(sa.delete(_M).where(_M.c.instance_uuid == instance_uuid))


def list_by_project(
    conn: sa.Connection,
    project_id: str,
    *,
    user_id: str | None = None,
    include_queued_for_delete: bool = True,
) -> list[InstanceMapping]:
    """Mappings of a project (and user), oldest first."""
    query = _select().where(_M.c.project_id == project_id)
    if user_id is not None:
        query = query.where(_M.c.user_id == user_id)
    if not include_queued_for_delete:
        query = query.where(
            sa.or_(_M.c.queued_for_delete.is_(None), _M.c.queued_for_delete == sa.false())
        )
    return [_mapping(row) for row in conn.execute(query.order_by(_M.c.id)).mappings()]


def count_live(conn: sa.Connection, project_id: str, user_id: str | None = None) -> int:
    """Mappings not queued for delete (Nova's instance count from the API DB)."""
    return len(list_by_project(conn, project_id, user_id=user_id, include_queued_for_delete=False))
