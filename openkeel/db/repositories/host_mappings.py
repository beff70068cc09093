"""SQL for host mappings (API DB ``host_mappings``): which cell a compute host belongs to.

Compute registers its host on start; conductor and the cell router look a host's cell up to
create an instance in the right cell database.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa

from openkeel.db.schema import api as api_schema
from openkeel.db.schema.columns import utcnow
from openkeel.domain.instances import HostMappingNotFound

_H = api_schema.host_mappings
_CELLS = api_schema.cell_mappings


@dataclass(frozen=True)
class HostMapping:
    host: str
    cell_id: int
    cell_uuid: str


def _select() -> sa.Select[tuple[str, int, str]]:
    return sa.select(_H.c.host, _H.c.cell_id, _CELLS.c.uuid).join(
        _CELLS, _CELLS.c.id == _H.c.cell_id
    )


def get(conn: sa.Connection, host: str) -> HostMapping:
    """The host's mapping; ``HostMappingNotFound`` if the host is not mapped."""
    row = conn.execute(_select().where(_H.c.host == host)).first()
    if row is None:
        raise HostMappingNotFound(host)
    return HostMapping(row[0], row[1], row[2])


def list_all(conn: sa.Connection, cell_uuid: str | None = None) -> list[HostMapping]:
    query = _select()
    if cell_uuid is not None:
        query = query.where(_CELLS.c.uuid == cell_uuid)
    return [HostMapping(r[0], r[1], r[2]) for r in conn.execute(query.order_by(_H.c.host))]


def ensure(conn: sa.Connection, host: str, cell_uuid: str) -> HostMapping:
    """Map ``host`` to ``cell_uuid`` unless it is mapped already (compute start-up)."""
    existing = conn.execute(_select().where(_H.c.host == host)).first()
    if existing is not None:
        return HostMapping(existing[0], existing[1], existing[2])
    cell_id = conn.execute(sa.select(_CELLS.c.id).where(_CELLS.c.uuid == cell_uuid)).scalar()
    if cell_id is None:
        raise ValueError(f"Cell {cell_uuid} has no mapping.")
    conn.execute(sa.insert(_H).values(host=host, cell_id=cell_id, created_at=utcnow()))
    return HostMapping(host, int(cell_id), cell_uuid)


def delete(conn: sa.Connection, host: str) -> None:
    conn.execute(sa.delete(_H).where(_H.c.host == host))
