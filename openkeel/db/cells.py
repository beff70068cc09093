"""Cells v2 bootstrap against the API database (``nova-manage api_db`` / ``db`` / ``cell_v2``).

Cell mappings tell the API tier where each cell's database and message queue
are. cell0 (fixed UUID) holds instances that never got scheduled. These
functions do the database work; ``openkeel.cmd.manage`` adds the CLI, the
messages and the exit codes.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import make_url

from openkeel.db import migrate
from openkeel.db.engine import make_engine
from openkeel.db.schema import api as api_schema
from openkeel.db.schema import cell as cell_schema
from openkeel.db.schema.columns import utcnow

CELL0_UUID = "00000000-0000-0000-0000-000000000000"
CELL0_NAME = "cell0"
# cell0 is never reached over RPC; Nova records this placeholder transport.
CELL0_TRANSPORT_URL = "none:///"
CELL0_SUFFIX = "_cell0"

_cells = api_schema.cell_mappings


@dataclass(frozen=True)
class CellMapping:
    """Where a cell's database and message queue are (a ``cell_mappings`` row)."""

    id: int
    uuid: str
    name: str | None
    transport_url: str | None
    database_connection: str | None
    disabled: bool

    @property
    def is_cell0(self) -> bool:
        return self.uuid == CELL0_UUID


class CellError(Exception):
    """Base class of the errors raised here."""


class CellMappingExists(CellError):
    """A cell mapping with this UUID already exists (e.g. cell0 already mapped)."""


class CellMappingNotFound(CellError):
    def __init__(self, cell_uuid: str) -> None:
        super().__init__(f"Cell {cell_uuid} has no mapping.")
        self.cell_uuid = cell_uuid


class DuplicateCellConnection(CellError):
    """Another cell already uses this transport URL or database connection."""

    def __init__(self, existing_uuid: str) -> None:
        super().__init__(f"transport_url/database_connection already used by cell {existing_uuid}")
        self.existing_uuid = existing_uuid


class CellHasHosts(CellError):
    """Hosts are still mapped to the cell."""


class CellHasInstances(CellError):
    """Live instances are still in the cell's database."""


class CellHasInstanceMappings(CellError):
    """Only instance mappings (of deleted instances) are left in the cell."""


def sync_api_db(api_url: str, revision: str = "head") -> None:
    """``nova-manage api_db sync``: migrate the API database."""
    migrate.upgrade(api_url, "api", revision)


def sync_cell_db(cell_url: str, revision: str = "head") -> None:
    """Migrate one cell database (``nova-manage db sync`` does cell0, then the local cell)."""
    migrate.upgrade(cell_url, "cell", revision)


def default_cell0_url(main_url: str) -> str:
    """cell0's database URL derived from the main one, as ``map_cell0`` does.

    Server databases get ``_cell0`` appended to their name; SQLite files get a
    sibling file with ``_cell0`` appended to the stem (``nova.sqlite`` →
    ``nova_cell0.sqlite``).
    """
    url = make_url(main_url)
    database = url.database or ""
    if url.get_backend_name() == "sqlite" and database not in ("", ":memory:"):
        path = PurePosixPath(database)
        database = str(path.with_name(path.stem + CELL0_SUFFIX + path.suffix))
    else:
        database += CELL0_SUFFIX
    return url.set(database=database).render_as_string(hide_password=False)


def map_cell0(api: sa.Engine, database_connection: str) -> CellMapping:
    """Create cell0's mapping; ``CellMappingExists`` if it is already mapped."""
    try:
        return _insert_cell(
            api,
            uuid=CELL0_UUID,
            name=CELL0_NAME,
            transport_url=CELL0_TRANSPORT_URL,
            database_connection=database_connection,
            disabled=False,
        )
    except sa.exc.IntegrityError as exc:
        raise CellMappingExists(CELL0_UUID) from exc


def create_cell(
    api: sa.Engine,
    *,
    name: str | None,
    transport_url: str,
    database_connection: str,
    disabled: bool = False,
) -> CellMapping:
    """Map a new cell; ``DuplicateCellConnection`` if its URLs belong to another cell."""
    for cell in list_cells(api):
        if cell.database_connection == database_connection or cell.transport_url == transport_url:
            raise DuplicateCellConnection(cell.uuid)
    return _insert_cell(
        api,
        uuid=str(uuid.uuid4()),
        name=name,
        transport_url=transport_url,
        database_connection=database_connection,
        disabled=disabled,
    )


def list_cells(api: sa.Engine) -> list[CellMapping]:
    """All cell mappings, in creation order."""
    with api.connect() as connection:
        rows = connection.execute(sa.select(_cells).order_by(_cells.c.id)).mappings().all()
    return [to_cell(row) for row in rows]


def get_cell(api: sa.Engine, cell_uuid: str) -> CellMapping:
    """The mapping of cell ``cell_uuid``; ``CellMappingNotFound`` if none."""
    with api.connect() as connection:
        row = connection.execute(sa.select(_cells).where(_cells.c.uuid == cell_uuid)).mappings()
        found = row.one_or_none()
    if found is None:
        raise CellMappingNotFound(cell_uuid)
    return to_cell(found)


def delete_cell(api: sa.Engine, cell_uuid: str, *, force: bool = False) -> None:
    """Delete an empty cell's mapping, as ``cell_v2 delete_cell``.

    With ``force``, host mappings and the instance mappings of deleted
    instances go too (and the cell's compute nodes are marked unmapped).
    Raises ``CellMappingNotFound``, ``CellHasHosts``, ``CellHasInstances``
    or ``CellHasInstanceMappings``.
    """
    cell = get_cell(api, cell_uuid)
    hosts = _count(api, api_schema.host_mappings, api_schema.host_mappings.c.cell_id == cell.id)
    if hosts and not force:
        raise CellHasHosts(cell_uuid)
    mappings = api_schema.instance_mappings
    if _count(api, mappings, mappings.c.cell_id == cell.id):
        if _cell_has_live_instances(cell):
            raise CellHasInstances(cell_uuid)
        if not force:
            raise CellHasInstanceMappings(cell_uuid)
    if hosts:
        _unmap_compute_nodes(cell)
    with api.begin() as connection:
        connection.execute(sa.delete(mappings).where(mappings.c.cell_id == cell.id))
        host_mappings = api_schema.host_mappings
        connection.execute(sa.delete(host_mappings).where(host_mappings.c.cell_id == cell.id))
        connection.execute(sa.delete(_cells).where(_cells.c.id == cell.id))


def compute_hosts(cell_url: str) -> list[str]:
    """Hosts of the live compute nodes in a cell database."""
    nodes = cell_schema.compute_nodes
    query = sa.select(nodes.c.host).where(nodes.c.deleted == 0, nodes.c.host.is_not(None))
    with cell_engine(cell_url) as engine, engine.connect() as connection:
        return sorted(set(connection.execute(query.distinct()).scalars()))


def host_cell_uuid(api: sa.Engine, host: str) -> str | None:
    """UUID of the cell ``host`` is mapped to, or None."""
    hosts = api_schema.host_mappings
    query = (
        sa.select(_cells.c.uuid)
        .join(hosts, hosts.c.cell_id == _cells.c.id)
        .where(hosts.c.host == host)
    )
    with api.connect() as connection:
        return connection.execute(query).scalar_one_or_none()


def map_hosts(api: sa.Engine, cell: CellMapping, hosts: list[str]) -> None:
    """Create host mappings of ``hosts`` to ``cell``."""
    if not hosts:
        return
    rows = [{"cell_id": cell.id, "host": host} for host in hosts]
    with api.begin() as connection:
        connection.execute(sa.insert(api_schema.host_mappings), rows)


def map_instances(api: sa.Engine, cell: CellMapping) -> int:
    """Map every instance of ``cell`` (deleted ones too) that has no mapping; return how many."""
    instances = cell_schema.instances
    query = sa.select(instances.c.uuid, instances.c.project_id, instances.c.user_id)
    with cell_engine(cell.database_connection) as engine, engine.connect() as connection:
        found = connection.execute(query.order_by(instances.c.created_at)).all()
    mappings = api_schema.instance_mappings
    with api.begin() as connection:
        mapped = set(connection.execute(sa.select(mappings.c.instance_uuid)).scalars())
        rows = [instance_mapping_row(cell, row) for row in found if row.uuid not in mapped]
        if rows:
            connection.execute(sa.insert(mappings), rows)
    return len(rows)


@dataclass(frozen=True)
class SimpleCellSetup:
    """What ``simple_cell_setup`` did, in the order ``nova-manage`` reports it."""

    cell0: CellMapping
    cell0_existed: bool
    cell0_sync_error: str | None
    # None when the cell database has no compute nodes yet (nothing mapped).
    cell: CellMapping | None
    hosts_already_mapped: bool
    instances_mapped: int


def simple_cell_setup(
    api: sa.Engine,
    database_connection: str,
    transport_url: str,
    *,
    cell0_url: str | None = None,
) -> SimpleCellSetup:
    """``cell_v2 simple_cell_setup``: cell0, then one cell holding the existing compute hosts.

    Maps cell0 (at ``cell0_url`` or the URL derived from ``database_connection``)
    and migrates its database; then, if the cell database has compute nodes,
    maps a cell for it (reusing the cell its hosts are already mapped to), its
    unmapped hosts and its instances.
    """
    cell0, cell0_existed = _ensure_cell0(api, cell0_url or default_cell0_url(database_connection))
    sync_error = _try_sync(cell0)
    hosts = compute_hosts(database_connection)
    if not hosts:
        return SimpleCellSetup(cell0, cell0_existed, sync_error, None, False, 0)
    cell, missing = _cell_for_hosts(api, hosts, database_connection, transport_url)
    map_hosts(api, cell, missing)
    mapped = map_instances(api, cell)
    return SimpleCellSetup(cell0, cell0_existed, sync_error, cell, not missing, mapped)


def ensure_cell(
    api: sa.Engine, *, name: str | None, transport_url: str, database_connection: str
) -> CellMapping:
    """The cell using ``database_connection``, created if there is none (idempotent)."""
    for cell in list_cells(api):
        if cell.database_connection == database_connection and not cell.is_cell0:
            return cell
    return create_cell(
        api, name=name, transport_url=transport_url, database_connection=database_connection
    )


def discover_hosts(api: sa.Engine, cell: CellMapping) -> list[str]:
    """Map the cell's compute nodes not yet marked mapped (``cell_v2 discover_hosts``)."""
    nodes = cell_schema.compute_nodes
    unmapped = sa.and_(nodes.c.deleted == 0, nodes.c.mapped == 0, nodes.c.host.is_not(None))
    with cell_engine(cell.database_connection) as engine, engine.begin() as connection:
        hosts = sorted(set(connection.execute(sa.select(nodes.c.host).where(unmapped)).scalars()))
        new = [host for host in hosts if host_cell_uuid(api, host) is None]
        map_hosts(api, cell, new)
        connection.execute(sa.update(nodes).where(unmapped).values(mapped=1))
    return new


def _ensure_cell0(api: sa.Engine, cell0_url: str) -> tuple[CellMapping, bool]:
    try:
        return map_cell0(api, cell0_url), False
    except CellMappingExists:
        return get_cell(api, CELL0_UUID), True


def _try_sync(cell: CellMapping) -> str | None:
    try:
        sync_cell_db(cell.database_connection or "")
    except sa.exc.SQLAlchemyError as exc:
        return str(exc)
    return None


def _cell_for_hosts(
    api: sa.Engine, hosts: list[str], database_connection: str, transport_url: str
) -> tuple[CellMapping, list[str]]:
    """The cell to map ``hosts`` to and those of them not mapped yet."""
    owners = {host: host_cell_uuid(api, host) for host in hosts}
    missing = [host for host, owner in owners.items() if owner is None]
    known = [owner for owner in owners.values() if owner is not None]
    if known:
        return get_cell(api, known[-1]), missing
    cell = _insert_cell(
        api,
        uuid=str(uuid.uuid4()),
        name=None,
        transport_url=transport_url,
        database_connection=database_connection,
        disabled=False,
    )
    return cell, missing


def instance_mapping_row(cell: CellMapping, row: sa.Row[Any]) -> dict[str, Any]:
    return {
        "instance_uuid": row.uuid,
        "cell_id": cell.id,
        "project_id": row.project_id,
        "user_id": row.user_id,
        "queued_for_delete": False,
    }


def _insert_cell(api: sa.Engine, **values: Any) -> CellMapping:
    with api.begin() as connection:
        result = connection.execute(sa.insert(_cells).values(created_at=utcnow(), **values))
        key = result.inserted_primary_key
    if key is None:
        raise CellError("The database did not report the new cell mapping's id")
    return CellMapping(id=int(key[0]), **values)


def to_cell(row: sa.RowMapping) -> CellMapping:
    return CellMapping(
        id=row["id"],
        uuid=row["uuid"],
        name=row["name"],
        transport_url=row["transport_url"],
        database_connection=row["database_connection"],
        disabled=bool(row["disabled"]),
    )


def _count(api: sa.Engine, table: sa.Table, where: sa.ColumnElement[bool]) -> int:
    with api.connect() as connection:
        return connection.execute(
            sa.select(sa.func.count()).select_from(table).where(where)
        ).scalar_one()


def _cell_has_live_instances(cell: CellMapping) -> bool:
    instances = cell_schema.instances
    query = sa.select(instances.c.id).where(instances.c.deleted == 0).limit(1)
    with cell_engine(cell.database_connection) as engine, engine.connect() as connection:
        return connection.execute(query).first() is not None


def _unmap_compute_nodes(cell: CellMapping) -> None:
    nodes = cell_schema.compute_nodes
    with cell_engine(cell.database_connection) as engine, engine.begin() as connection:
        connection.execute(sa.update(nodes).where(nodes.c.deleted == 0).values(mapped=0))


@contextlib.contextmanager
def cell_engine(url: str | None) -> Iterator[sa.Engine]:
    """A short-lived engine on a cell database."""
    if not url:
        raise CellError("The cell mapping has no database_connection")
    engine = make_engine(url)
    try:
        yield engine
    finally:
        engine.dispose()
