"""Who may hold Placement allocations, read from the cell and API databases, for
``nova-manage placement heal_allocations / audit / sync_aggregates``: the instances to heal
(with their flavor), the node (resource provider) an instance runs on, the instances and
migrations in progress on a node, and the hosts of each aggregate with their node.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import sqlalchemy as sa

from openkeel.db import cells
from openkeel.db.cell_admin import HostMappingNotFound
from openkeel.db.cells import CellError, CellMapping
from openkeel.db.repositories import instances as instance_repo
from openkeel.db.schema import api as api_schema
from openkeel.db.schema import cell as cell_schema
from openkeel.domain.instances import Instance

# A migration in one of these states holds no allocation any more (Nova's "in progress" test).
FINISHED_MIGRATION = ("confirmed", "reverted", "error", "failed", "completed", "cancelled", "done")

_nodes = cell_schema.compute_nodes


class ComputeHostNotFound(CellError):
    """No compute node record for the host."""


class TooManyComputesForHost(CellError):
    """More than one compute node for the host."""


def instances_to_check(cell: CellMapping, instance_uuid: str | None) -> Iterator[Instance]:
    """The live instances of ``cell`` (or just ``instance_uuid``), oldest first."""
    instances = cell_schema.instances
    query = sa.select(instances.c.uuid).where(instances.c.deleted == 0)
    if instance_uuid:
        query = query.where(instances.c.uuid == instance_uuid)
    with cells.cell_engine(cell.database_connection) as engine, engine.connect() as connection:
        uuids = connection.execute(query.order_by(instances.c.created_at, instances.c.id))
        for uuid in list(uuids.scalars()):
            yield instance_repo.get(connection, uuid)


def node_uuid(cell: CellMapping, host: str, node: str) -> str | None:
    """The UUID (= resource provider) of compute node ``node`` of ``host``."""
    query = sa.select(_nodes.c.uuid).where(
        _nodes.c.deleted == 0, _nodes.c.host == host, _nodes.c.hypervisor_hostname == node
    )
    with cells.cell_engine(cell.database_connection) as engine, engine.connect() as connection:
        return connection.execute(query).scalars().first()


@dataclass(frozen=True)
class NodeConsumers:
    """The instances on a compute node and the migrations in progress to or from it."""

    instances: frozenset[str]
    migrations: frozenset[str]


def node_consumers(api: sa.Engine, uuid: str) -> NodeConsumers | None:
    """Who may hold allocations on compute node ``uuid``; None when no cell has that node."""
    for cell in cells.list_cells(api):
        if cell.is_cell0 or not cell.database_connection:
            continue
        with cells.cell_engine(cell.database_connection) as engine, engine.connect() as conn:
            node = conn.execute(
                sa.select(_nodes.c.host, _nodes.c.hypervisor_hostname).where(
                    _nodes.c.uuid == uuid, _nodes.c.deleted == 0
                )
            ).first()
            if node is not None:
                return _consumers(conn, node.host, node.hypervisor_hostname)
    return None


def _consumers(conn: sa.Connection, host: str, node: str) -> NodeConsumers:
    instances, migrations = cell_schema.instances, cell_schema.migrations
    on_node = sa.select(instances.c.uuid).where(
        instances.c.deleted == 0, instances.c.host == host, instances.c.node == node
    )
    moving = sa.select(migrations.c.uuid).where(
        migrations.c.deleted == 0,
        migrations.c.status.not_in(FINISHED_MIGRATION),
        sa.or_(
            sa.and_(migrations.c.source_compute == host, migrations.c.source_node == node),
            sa.and_(migrations.c.dest_compute == host, migrations.c.dest_node == node),
        ),
    )
    return NodeConsumers(
        frozenset(conn.execute(on_node).scalars()),
        frozenset(u for u in conn.execute(moving).scalars() if u),
    )


@dataclass(frozen=True)
class AggregateHosts:
    """A host aggregate: name, UUID and member hosts."""

    name: str
    uuid: str
    hosts: tuple[str, ...]


def aggregates(api: sa.Engine) -> list[AggregateHosts]:
    """Every host aggregate with its hosts."""
    aggs, members = api_schema.aggregates, api_schema.aggregate_hosts
    with api.connect() as connection:
        rows = connection.execute(
            sa.select(aggs.c.id, aggs.c.name, aggs.c.uuid).order_by(aggs.c.id)
        )
        found = rows.all()
        hosts = connection.execute(
            sa.select(members.c.aggregate_id, members.c.host).order_by(members.c.id)
        ).all()
    return [
        AggregateHosts(row.name, row.uuid, tuple(h.host for h in hosts if h.aggregate_id == row.id))
        for row in found
    ]


def host_node_uuid(api: sa.Engine, host: str) -> str:
    """The compute node UUID of ``host`` in the cell it is mapped to.

    Raises ``cell_admin.HostMappingNotFound`` (unmapped), ``ComputeHostNotFound`` or
    ``TooManyComputesForHost``."""
    cell_uuid = cells.host_cell_uuid(api, host)
    if cell_uuid is None:
        raise HostMappingNotFound(host)
    cell = cells.get_cell(api, cell_uuid)
    query = sa.select(_nodes.c.uuid).where(_nodes.c.deleted == 0, _nodes.c.host == host)
    with cells.cell_engine(cell.database_connection) as engine, engine.connect() as connection:
        uuids = list(connection.execute(query).scalars())
    if not uuids:
        raise ComputeHostNotFound(host)
    if len(uuids) > 1:
        raise TooManyComputesForHost(f"Unexpected number of compute node records ({len(uuids)}) "
                                     f"found for host {host}. There should only be a one-to-one "
                                     "mapping.")  # fmt: skip
    return str(uuids[0])
