"""SQL for compute nodes (cell DB ``compute_nodes``) and the servers they host.

Used by ``openkeel.api.usecases.hypervisors`` and ``services`` (and by tests that register
nodes until the compute role's resource tracker writes them). Only live rows are read.
"""

from __future__ import annotations

import uuid as uuidlib
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from openkeel.db.schema import cell as cell_schema
from openkeel.db.schema.columns import utcnow
from openkeel.db.softdelete import live

_N = cell_schema.compute_nodes
_S = cell_schema.services
_I = cell_schema.instances

STAT_FIELDS = (
    "current_workload",
    "disk_available_least",
    "free_disk_gb",
    "free_ram_mb",
    "local_gb",
    "local_gb_used",
    "memory_mb",
    "memory_mb_used",
    "running_vms",
    "vcpus",
    "vcpus_used",
)
"""The columns ``os-hypervisors/statistics`` sums."""


@dataclass(frozen=True)
class ComputeNodeRecord:
    """One live ``compute_nodes`` row (the columns the API shows)."""

    id: int
    uuid: str | None
    service_id: int | None
    host: str | None
    hypervisor_hostname: str | None
    hypervisor_type: str
    hypervisor_version: int
    host_ip: str | None
    vcpus: int
    memory_mb: int
    local_gb: int
    vcpus_used: int
    memory_mb_used: int
    local_gb_used: int
    free_ram_mb: int | None
    free_disk_gb: int | None
    current_workload: int | None
    running_vms: int | None
    disk_available_least: int | None
    cpu_info: str
    stats: str | None


@dataclass(frozen=True)
class HostedServer:
    """A server on a compute host (its row id makes Nova's instance name)."""

    id: int
    uuid: str


def _record(row: sa.Row[Any]) -> ComputeNodeRecord:
    return ComputeNodeRecord(
        **{name: getattr(row, name) for name in ComputeNodeRecord.__dataclass_fields__},
    )


def create_compute_node(
    conn: sa.Connection, host: str, hypervisor_hostname: str, **values: Any
) -> ComputeNodeRecord:
    """Insert a compute node; unspecified resources are zero, ``cpu_info`` is ``{}``."""
    row = {
        "uuid": str(uuidlib.uuid4()),
        "vcpus": 0,
        "memory_mb": 0,
        "local_gb": 0,
        "vcpus_used": 0,
        "memory_mb_used": 0,
        "local_gb_used": 0,
        "hypervisor_type": "fake",
        "hypervisor_version": 1000,
        "cpu_info": "{}",
        "stats": "{}",
        "created_at": utcnow(),
        **values,
        "host": host,
        "hypervisor_hostname": hypervisor_hostname,
    }
    key = conn.execute(sa.insert(_N).values(row)).inserted_primary_key
    assert key is not None
    new_id = key[0]
    found = get_node(conn, int(new_id))
    assert found is not None
    return found


def list_nodes(
    conn: sa.Connection, limit: int | None = None, after_id: int | None = None
) -> list[ComputeNodeRecord]:
    """Live nodes by id, after ``after_id`` and at most ``limit`` of them."""
    query = sa.select(_N).where(live(_N)).order_by(_N.c.id)
    if after_id is not None:
        query = query.where(_N.c.id > after_id)
    if limit:
        query = query.limit(limit)
    return [_record(row) for row in conn.execute(query)]


def get_node(conn: sa.Connection, node_id: int) -> ComputeNodeRecord | None:
    """The live node with integer ``node_id``."""
    row = conn.execute(sa.select(_N).where(live(_N), _N.c.id == node_id)).first()
    return _record(row) if row is not None else None


def get_node_by_uuid(conn: sa.Connection, node_uuid: str) -> ComputeNodeRecord | None:
    """The live node with ``node_uuid``."""
    row = conn.execute(sa.select(_N).where(live(_N), _N.c.uuid == node_uuid)).first()
    return _record(row) if row is not None else None


def nodes_of_host(conn: sa.Connection, host: str) -> list[ComputeNodeRecord]:
    """Live nodes of one compute host."""
    query = sa.select(_N).where(live(_N), _N.c.host == host).order_by(_N.c.id)
    return [_record(row) for row in conn.execute(query)]


def search_nodes(conn: sa.Connection, fragment: str) -> list[ComputeNodeRecord]:
    """Live nodes whose hypervisor hostname contains ``fragment`` (SQL LIKE, as Nova)."""
    pattern = f"%{fragment}%"
    query = sa.select(_N).where(live(_N), _N.c.hypervisor_hostname.like(pattern)).order_by(_N.c.id)
    return [_record(row) for row in conn.execute(query)]


def statistics(conn: sa.Connection) -> dict[str, int]:
    """Count and sums of the nodes whose enabled, live compute service exists."""
    owner = sa.and_(
        sa.or_(_N.c.host == _S.c.host, _N.c.service_id == _S.c.id),
        _S.c.disabled == sa.false(),
        _S.c.binary == "nova-compute",
        live(_S),
    )
    columns = [sa.func.count().label("count")]
    columns += [sa.func.coalesce(sa.func.sum(_N.c[f]), 0).label(f) for f in STAT_FIELDS]
    query = sa.select(*columns).select_from(_N.join(_S, owner)).where(live(_N))
    row = conn.execute(query).one()
    return {key: int(value or 0) for key, value in row._mapping.items()}


def servers_on_host(conn: sa.Connection, host: str) -> list[HostedServer]:
    """Live instances on ``host``, by id."""
    query = sa.select(_I.c.id, _I.c.uuid).where(live(_I), _I.c.host == host).order_by(_I.c.id)
    return [HostedServer(row.id, row.uuid) for row in conn.execute(query)]


def count_servers_on_host(conn: sa.Connection, host: str) -> int:
    """How many live instances are on ``host``."""
    query = sa.select(sa.func.count()).where(live(_I), _I.c.host == host)
    return int(conn.execute(query).scalar_one())


@dataclass(frozen=True)
class HostedUsage:
    """What one live instance on a host takes, as its flavor says (os-hosts show)."""

    project_id: str | None
    vcpus: int
    memory_mb: int
    disk_gb: int


def usage_on_host(conn: sa.Connection, host: str) -> list[HostedUsage]:
    """The flavor resources of each live instance on ``host``, by id."""
    query = (
        sa.select(_I.c.project_id, _I.c.vcpus, _I.c.memory_mb, _I.c.root_gb, _I.c.ephemeral_gb)
        .where(live(_I), _I.c.host == host)
        .order_by(_I.c.id)
    )
    return [
        HostedUsage(
            r.project_id, r.vcpus or 0, r.memory_mb or 0, (r.root_gb or 0) + (r.ephemeral_gb or 0)
        )
        for r in conn.execute(query)
    ]
