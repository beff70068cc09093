"""SQL for service records (cell DB ``services``) and the host bookkeeping around them.

Used by ``openkeel.api.usecases.services`` and ``hypervisors`` (and by tests that register
compute services until the compute role writes them). Rows are soft-deleted as Nova does;
host mappings and aggregate memberships live in the API database.
"""

from __future__ import annotations

import datetime
import uuid as uuidlib
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from openkeel.db.schema import api as api_schema
from openkeel.db.schema import cell as cell_schema
from openkeel.db.schema.columns import utcnow
from openkeel.db.softdelete import live, soft_delete

_S = cell_schema.services
_NODES = cell_schema.compute_nodes
_MIGRATIONS = cell_schema.migrations

# Migration statuses Nova treats as finished (not "in progress").
_FINISHED_MIGRATIONS = (
    "confirmed",
    "reverted",
    "error",
    "failed",
    "completed",
    "cancelled",
    "done",
)


@dataclass(frozen=True)
class ServiceRecord:
    """One live ``services`` row."""

    id: int
    uuid: str | None
    host: str
    binary: str
    topic: str | None
    disabled: bool
    disabled_reason: str | None
    forced_down: bool
    last_seen_up: datetime.datetime | None
    created_at: datetime.datetime | None
    updated_at: datetime.datetime | None
    report_count: int
    version: int


def _record(row: sa.Row[Any]) -> ServiceRecord:
    return ServiceRecord(
        id=row.id,
        uuid=row.uuid,
        host=row.host or "",
        binary=row.binary or "",
        topic=row.topic,
        disabled=bool(row.disabled),
        disabled_reason=row.disabled_reason,
        forced_down=bool(row.forced_down),
        last_seen_up=row.last_seen_up,
        created_at=row.created_at,
        updated_at=row.updated_at,
        report_count=row.report_count or 0,
        version=row.version or 0,
    )


def create_service(conn: sa.Connection, host: str, binary: str, **values: Any) -> ServiceRecord:
    """Insert a service row (``topic`` defaults to the binary without ``nova-``)."""
    row = {
        "uuid": str(uuidlib.uuid4()),
        "topic": binary.removeprefix("nova-"),
        "report_count": 0,
        "disabled": False,
        "forced_down": False,
        "version": 0,
        "created_at": utcnow(),
        **values,
        "host": host,
        "binary": binary,
    }
    key = conn.execute(sa.insert(_S).values(row)).inserted_primary_key
    assert key is not None
    new_id = key[0]
    found = get_service(conn, int(new_id))
    assert found is not None
    return found


def list_services(
    conn: sa.Connection, host: str | None = None, binary: str | None = None
) -> list[ServiceRecord]:
    """Live services of one cell DB, optionally of one host and/or binary, by id."""
    query = sa.select(_S).where(live(_S)).order_by(_S.c.id)
    if host is not None:
        query = query.where(_S.c.host == host)
    if binary is not None:
        query = query.where(_S.c.binary == binary)
    return [_record(row) for row in conn.execute(query)]


def get_service(conn: sa.Connection, service_id: int) -> ServiceRecord | None:
    """The live service with integer ``service_id``."""
    row = conn.execute(sa.select(_S).where(live(_S), _S.c.id == service_id)).first()
    return _record(row) if row is not None else None


def get_service_by_uuid(conn: sa.Connection, service_uuid: str) -> ServiceRecord | None:
    """The live service with ``service_uuid``."""
    row = conn.execute(sa.select(_S).where(live(_S), _S.c.uuid == service_uuid)).first()
    return _record(row) if row is not None else None


def get_by_host_and_binary(conn: sa.Connection, host: str, binary: str) -> ServiceRecord | None:
    """The live service of ``binary`` on ``host``."""
    found = list_services(conn, host=host, binary=binary)
    return found[0] if found else None


def update_service(conn: sa.Connection, service_id: int, **values: Any) -> None:
    """Set columns of a live service (``updated_at`` refreshed)."""
    stmt = sa.update(_S).where(live(_S), _S.c.id == service_id)
    conn.execute(stmt.values(updated_at=utcnow(), **values))


def destroy_service(conn: sa.Connection, service: ServiceRecord) -> None:
    """Soft-delete a service; a compute service takes its compute nodes with it."""
    soft_delete(conn, _S, _S.c.id == service.id)
    if service.binary != "nova-compute":
        return
    owned = sa.or_(_NODES.c.service_id == service.id, _NODES.c.host == service.host)
    stmt = sa.update(_NODES).where(live(_NODES), owned)
    conn.execute(
        stmt.values(
            deleted=_NODES.c.id,
            deleted_at=utcnow(),
            updated_at=_NODES.c.updated_at,
            mapped=0,
        )
    )


def migrations_in_progress(conn: sa.Connection, host: str, node: str | None) -> int:
    """How many unfinished migrations involve ``host``/``node`` as source or destination."""
    m = _MIGRATIONS
    involved = sa.or_(
        sa.and_(m.c.source_compute == host, m.c.source_node == node),
        sa.and_(m.c.dest_compute == host, m.c.dest_node == node),
    )
    query = sa.select(sa.func.count()).where(
        live(m), involved, m.c.status.not_in(_FINISHED_MIGRATIONS)
    )
    return int(conn.execute(query).scalar_one())


def done_evacuations_from(conn: sa.Connection, host: str) -> int:
    """How many evacuations away from ``host`` are still in status ``done``."""
    m = _MIGRATIONS
    query = sa.select(sa.func.count()).where(
        live(m),
        m.c.source_compute == host,
        m.c.status == "done",
        m.c.migration_type == "evacuation",
    )
    return int(conn.execute(query).scalar_one())


def map_host(api_conn: sa.Connection, cell_uuid: str, host: str) -> None:
    """Map ``host`` to the cell ``cell_uuid`` (API DB ``host_mappings``)."""
    cells = api_schema.cell_mappings
    cell_id = api_conn.execute(sa.select(cells.c.id).where(cells.c.uuid == cell_uuid)).scalar_one()
    api_conn.execute(
        sa.insert(api_schema.host_mappings).values(cell_id=cell_id, host=host, created_at=utcnow())
    )


def host_cell(api_conn: sa.Connection, host: str) -> str | None:
    """UUID of the cell ``host`` is mapped to, or None."""
    cells, hosts = api_schema.cell_mappings, api_schema.host_mappings
    query = (
        sa.select(cells.c.uuid)
        .select_from(hosts.join(cells, hosts.c.cell_id == cells.c.id))
        .where(hosts.c.host == host)
    )
    return api_conn.execute(query).scalar_one_or_none()


def unmap_host(api_conn: sa.Connection, host: str) -> None:
    """Drop ``host``'s host mapping and its aggregate memberships (API DB)."""
    api_conn.execute(
        sa.delete(api_schema.host_mappings).where(api_schema.host_mappings.c.host == host)
    )
    members = api_schema.aggregate_hosts
    api_conn.execute(sa.delete(members).where(members.c.host == host))
