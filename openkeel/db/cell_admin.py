"""Cells v2 administration beyond the bootstrap (``nova-manage cell_v2`` host and instance
commands): host discovery by compute node or by service, host mappings listed and deleted,
cell updates, instance mapping in batches, and an instance's mapping checked.

The database work only; ``openkeel.cmd.manage_cells`` adds messages and exit codes.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from openkeel.db import cells
from openkeel.db.cells import CellError, CellMapping
from openkeel.db.schema import api as api_schema
from openkeel.db.schema import cell as cell_schema

COMPUTE_BINARY = "nova-compute"
# nova-manage's map_instances keeps where it stopped in a fake instance mapping of this project,
# the last instance's UUID with its dashes turned into spaces.
MARKER_PROJECT = "INSTANCE_MIGRATION_MARKER"
MAP_BATCH = 50

_hosts = api_schema.host_mappings
_cells = api_schema.cell_mappings
_mappings = api_schema.instance_mappings


class HostMappingNotFound(CellError):
    """No host mapping for this host."""


class HostInOtherCell(CellError):
    """The host is mapped to another cell."""


class HostHasInstances(CellError):
    """Instances are still on the host."""


@dataclass(frozen=True)
class HostMapping:
    """A host and the cell it is mapped to."""

    host: str
    cell: CellMapping


def discover_hosts(
    api: sa.Engine,
    cell_uuid: str | None,
    *,
    by_service: bool = False,
    report: Callable[[str], None] = lambda _: None,
) -> list[str]:
    """Map the hosts found in the cells (one cell, or all but cell0); the hosts mapped.

    By compute node (the default): nodes not marked mapped get a host mapping (if their host has
    none) and are marked. By service: every nova-compute service's host without a mapping.
    """
    if cell_uuid:
        found = [cells.get_cell(api, cell_uuid)]
    else:
        found = cells.list_cells(api)
        report(f"Found {len(found)} cell mappings.")
    mapped: list[str] = []
    for cell in found:
        if cell.is_cell0:
            report("Skipping cell0 since it does not contain hosts.")
            continue
        label = f"'{cell.name}': {cell.uuid}" if cell.name else cell.uuid
        report(f"Getting computes from cell{' ' if cell.name else ': '}{label}")
        added = (_by_service if by_service else _by_node)(api, cell, report)
        report(f"Found {len(added)} unmapped computes in cell: {cell.uuid}")
        mapped += added
    return mapped


def _by_node(api: sa.Engine, cell: CellMapping, report: Callable[[str], None]) -> list[str]:
    nodes = cell_schema.compute_nodes
    unmapped = sa.and_(nodes.c.deleted == 0, nodes.c.mapped == 0, nodes.c.host.is_not(None))
    added: list[str] = []
    with cells.cell_engine(cell.database_connection) as engine, engine.begin() as connection:
        rows = connection.execute(sa.select(nodes.c.id, nodes.c.host, nodes.c.uuid).where(unmapped))
        for node in rows.all():
            report(f"Checking host mapping for compute host '{node.host}': {node.uuid}")
            if node.host in added or cells.host_cell_uuid(api, node.host) is not None:
                continue
            report(f"Creating host mapping for compute host '{node.host}': {node.uuid}")
            cells.map_hosts(api, cell, [node.host])
            added.append(node.host)
            connection.execute(sa.update(nodes).where(nodes.c.id == node.id).values(mapped=1))
    return added


def _by_service(api: sa.Engine, cell: CellMapping, report: Callable[[str], None]) -> list[str]:
    services = cell_schema.services
    query = sa.select(services.c.host).where(
        services.c.deleted == 0, services.c.binary == COMPUTE_BINARY
    )
    with cells.cell_engine(cell.database_connection) as engine, engine.connect() as connection:
        hosts = list(dict.fromkeys(connection.execute(query.order_by(services.c.id)).scalars()))
    added = []
    for host in hosts:
        if cells.host_cell_uuid(api, host) is None:
            report(f"Creating host mapping for service {host}")
            cells.map_hosts(api, cell, [host])
            added.append(host)
    return added


def list_host_mappings(api: sa.Engine, cell_uuid: str | None = None) -> list[HostMapping]:
    """Host mappings (of one cell), sorted by host; ``CellMappingNotFound`` for a bad cell."""
    query = sa.select(_hosts.c.host, _cells).join(_cells, _hosts.c.cell_id == _cells.c.id)
    if cell_uuid:
        cell = cells.get_cell(api, cell_uuid)
        query = query.where(_cells.c.id == cell.id)
    with api.connect() as connection:
        rows = connection.execute(query.order_by(_hosts.c.host)).mappings().all()
    return [HostMapping(row["host"], cells.to_cell(row)) for row in rows]


def update_cell(api: sa.Engine, cell_uuid: str, **values: Any) -> None:
    """Set the given cell mapping columns (name, transport_url, database_connection,
    disabled)."""
    with api.begin() as connection:
        connection.execute(sa.update(_cells).where(_cells.c.uuid == cell_uuid).values(**values))


def other_cell_using(
    api: sa.Engine, cell_uuid: str, transport_url: str | None, database_connection: str | None
) -> CellMapping | None:
    """Another cell with this transport URL or database connection, if any."""
    for cell in cells.list_cells(api):
        if cell.uuid == cell_uuid:
            continue
        if (transport_url and cell.transport_url == transport_url) or (
            database_connection and cell.database_connection == database_connection
        ):
            return cell
    return None


def delete_host(api: sa.Engine, cell_uuid: str, host: str) -> None:
    """Remove ``host``'s mapping to ``cell_uuid`` and mark its compute nodes unmapped.

    Raises ``CellMappingNotFound``, ``HostMappingNotFound``, ``HostInOtherCell`` or
    ``HostHasInstances`` (live instances on the host, in that cell).
    """
    cell = cells.get_cell(api, cell_uuid)
    owner = cells.host_cell_uuid(api, host)
    if owner is None:
        raise HostMappingNotFound(host)
    if owner != cell.uuid:
        raise HostInOtherCell(host)
    instances, nodes = cell_schema.instances, cell_schema.compute_nodes
    with cells.cell_engine(cell.database_connection) as engine, engine.begin() as connection:
        live = sa.select(instances.c.id).where(instances.c.host == host, instances.c.deleted == 0)
        if connection.execute(live.limit(1)).first() is not None:
            raise HostHasInstances(host)
        connection.execute(
            sa.update(nodes).where(nodes.c.host == host, nodes.c.deleted == 0).values(mapped=0)
        )
    with api.begin() as connection:
        connection.execute(sa.delete(_hosts).where(_hosts.c.host == host))


def map_instances(
    api: sa.Engine, cell: CellMapping, max_count: int | None, reset: bool = False
) -> bool:
    """Map the cell's unmapped instances, oldest first, ``max_count`` of them (all when None),
    resuming after the last run's marker unless ``reset``; True when more are left."""
    marker = _take_marker(api)
    if reset:
        marker = None
    batch = max_count or MAP_BATCH
    while True:
        marker = _map_batch(api, cell, batch, marker)
        if marker is None or max_count is not None:
            break
    if marker is None:
        return False
    with api.begin() as connection:
        connection.execute(
            sa.insert(_mappings).values(
                instance_uuid=marker.replace("-", " "),
                project_id=MARKER_PROJECT,
                user_id=MARKER_PROJECT,
            )
        )
    return True


def _take_marker(api: sa.Engine) -> str | None:
    with api.begin() as connection:
        found = connection.execute(
            sa.select(_mappings.c.instance_uuid).where(_mappings.c.project_id == MARKER_PROJECT)
        ).scalar_one_or_none()
        connection.execute(sa.delete(_mappings).where(_mappings.c.project_id == MARKER_PROJECT))
    return None if found is None else found.replace(" ", "-")


def _map_batch(api: sa.Engine, cell: CellMapping, limit: int, marker: str | None) -> str | None:
    """Map up to ``limit`` instances after ``marker``; the next marker (None at the end)."""
    instances = cell_schema.instances
    order = (instances.c.created_at, instances.c.id)
    query = sa.select(instances.c.uuid, instances.c.project_id, instances.c.user_id)
    with cells.cell_engine(cell.database_connection) as engine, engine.connect() as connection:
        if marker is not None:
            after = connection.execute(
                sa.select(*order).where(instances.c.uuid == marker)
            ).one_or_none()
            if after is not None:
                query = query.where(sa.tuple_(*order) > sa.tuple_(*after))
        rows = connection.execute(query.order_by(*order).limit(limit)).all()
    with api.begin() as connection:
        mapped = set(
            connection.execute(
                sa.select(_mappings.c.instance_uuid).where(
                    _mappings.c.instance_uuid.in_([row.uuid for row in rows])
                )
            ).scalars()
        )
        new = [cells.instance_mapping_row(cell, row) for row in rows if row.uuid not in mapped]
        if new:
            connection.execute(sa.insert(_mappings), new)
    return rows[-1].uuid if len(rows) == limit else None


class InstanceCheck(enum.IntEnum):
    """``cell_v2 verify_instance`` results, valued as its exit codes."""

    MAPPED = 0
    NO_MAPPING = 1
    NO_CELL = 2
    DELETED = 3
    ARCHIVED = 4


def verify_instance(api: sa.Engine, uuid: str) -> tuple[InstanceCheck, CellMapping | None]:
    """Whether instance ``uuid`` is mapped to a cell that holds it."""
    with api.connect() as connection:
        row = connection.execute(
            sa.select(_mappings.c.cell_id).where(_mappings.c.instance_uuid == uuid)
        ).one_or_none()
        if row is None:
            return InstanceCheck.NO_MAPPING, None
        if row.cell_id is None:
            return InstanceCheck.NO_CELL, None
        cell_row = connection.execute(sa.select(_cells).where(_cells.c.id == row.cell_id))
        cell = cells.to_cell(cell_row.mappings().one())
    instances = cell_schema.instances
    with cells.cell_engine(cell.database_connection) as engine, engine.connect() as connection:
        deleted = connection.execute(
            sa.select(instances.c.deleted).where(instances.c.uuid == uuid)
        ).scalar_one_or_none()
    if deleted is None:
        return InstanceCheck.ARCHIVED, cell
    if deleted:
        return InstanceCheck.DELETED, cell
    return InstanceCheck.MAPPED, cell
