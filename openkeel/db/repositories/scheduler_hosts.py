"""SQL the scheduler role reads per request from a cell DB: compute nodes by uuid (the
Placement providers it got as candidates), their compute services, and where named
instances run. Cost is bounded by the candidates and the uuids asked for, never by how many
instances the cell holds. Called by ``openkeel.scheduler.host_state``.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import sqlalchemy as sa

from openkeel.db.schema import cell as cell_schema
from openkeel.db.softdelete import live

_N = cell_schema.compute_nodes
_S = cell_schema.services
_I = cell_schema.instances
_CHUNK = 500  # bound on bound parameters per IN (...)


@dataclass(frozen=True)
class NodeRow:
    """The columns of a live ``compute_nodes`` row the scheduler's host states use."""

    uuid: str
    host: str
    hypervisor_hostname: str
    hypervisor_type: str
    hypervisor_version: int
    host_ip: str | None
    vcpus: int
    vcpus_used: int
    memory_mb: int
    memory_mb_used: int
    free_ram_mb: int | None
    local_gb: int
    local_gb_used: int
    free_disk_gb: int | None
    disk_available_least: int | None
    cpu_allocation_ratio: float | None
    ram_allocation_ratio: float | None
    disk_allocation_ratio: float | None
    running_vms: int | None
    supported_instances: str | None
    cpu_info: str | None
    stats: str | None
    updated_at: datetime.datetime | None


@dataclass(frozen=True)
class ServiceRow:
    """A live compute service: what ComputeFilter needs."""

    host: str
    disabled: bool
    disabled_reason: str | None
    forced_down: bool
    last_seen_up: datetime.datetime | None
    updated_at: datetime.datetime | None
    created_at: datetime.datetime | None


def _chunks(values: Iterable[str]) -> Iterator[list[str]]:
    ordered = sorted(set(values))
    for start in range(0, len(ordered), _CHUNK):
        yield ordered[start : start + _CHUNK]


def nodes_by_uuids(conn: sa.Connection, uuids: Iterable[str]) -> list[NodeRow]:
    """Live compute nodes whose uuid is in ``uuids``."""
    found: list[NodeRow] = []
    columns = [_N.c[name] for name in NodeRow.__dataclass_fields__]
    for chunk in _chunks(uuids):
        query = sa.select(*columns).where(live(_N), _N.c.uuid.in_(chunk))
        found.extend(NodeRow(**row._asdict()) for row in conn.execute(query))
    return found


def nodes_by_host_or_node(conn: sa.Connection, host: str | None, node: str | None) -> list[NodeRow]:
    """Live compute nodes of ``host`` and/or with hypervisor hostname ``node``."""
    columns = [_N.c[name] for name in NodeRow.__dataclass_fields__]
    query = sa.select(*columns).where(live(_N))
    if host is not None:
        query = query.where(_N.c.host == host)
    if node is not None:
        query = query.where(_N.c.hypervisor_hostname == node)
    return [NodeRow(**row._asdict()) for row in conn.execute(query.order_by(_N.c.id))]


def compute_services(conn: sa.Connection, hosts: Iterable[str]) -> dict[str, ServiceRow]:
    """The live ``nova-compute`` service of each of ``hosts`` that has one."""
    found: dict[str, ServiceRow] = {}
    for chunk in _chunks(hosts):
        query = sa.select(
            _S.c.host,
            _S.c.disabled,
            _S.c.disabled_reason,
            _S.c.forced_down,
            _S.c.last_seen_up,
            _S.c.updated_at,
            _S.c.created_at,
        ).where(live(_S), _S.c.binary == "nova-compute", _S.c.host.in_(chunk))
        for row in conn.execute(query):
            found[row.host] = ServiceRow(
                host=row.host,
                disabled=bool(row.disabled),
                disabled_reason=row.disabled_reason,
                forced_down=bool(row.forced_down),
                last_seen_up=row.last_seen_up,
                updated_at=row.updated_at,
                created_at=row.created_at,
            )
    return found


def instance_hosts(conn: sa.Connection, uuids: Sequence[str]) -> tuple[dict[str, str], set[str]]:
    """Of ``uuids``: the live instances that have a host (uuid -> host), and the deleted
    ones. Live instances without a host yet, and uuids without a row, are in neither."""
    located: dict[str, str] = {}
    deleted: set[str] = set()
    for chunk in _chunks(uuids):
        query = sa.select(_I.c.uuid, _I.c.host, _I.c.deleted).where(_I.c.uuid.in_(chunk))
        for row in conn.execute(query):
            if row.deleted:
                deleted.add(row.uuid)
            elif row.host:
                located[row.uuid] = row.host
    return located, deleted - set(located)
