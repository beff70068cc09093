"""SQL of the resource tracker: the ``compute_nodes`` row of this host's node and the resource
usage of the instances placed on it (cell DB).

Only the compute role writes these rows (openkeel.compute.resource_tracker); the hypervisors
API reads them through openkeel.db.repositories.compute_nodes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from openkeel.db.schema import cell as cell_schema
from openkeel.db.schema.columns import utcnow
from openkeel.db.softdelete import live
from openkeel.domain.states import TaskState, VmState

_N = cell_schema.compute_nodes
_I = cell_schema.instances

# Instances in these vm_states hold no resources on the host.
_FREE_STATES = (VmState.DELETED.value, VmState.SHELVED_OFFLOADED.value)
# Task states that count as "workload" (Nova's current_workload).
_WORKLOAD_TASKS = (
    TaskState.SCHEDULING.value,
    TaskState.BLOCK_DEVICE_MAPPING.value,
    TaskState.NETWORKING.value,
    TaskState.SPAWNING.value,
    TaskState.RESIZE_PREP.value,
    TaskState.RESIZE_MIGRATING.value,
    TaskState.RESIZE_MIGRATED.value,
    TaskState.RESIZE_FINISH.value,
    TaskState.REBUILDING.value,
    TaskState.REBUILD_SPAWNING.value,
    TaskState.REBUILD_BLOCK_DEVICE_MAPPING.value,
    TaskState.IMAGE_SNAPSHOT.value,
    TaskState.IMAGE_BACKUP.value,
)


@dataclass(frozen=True)
class Usage:
    """What the instances on one node use."""

    vcpus: int = 0
    memory_mb: int = 0
    local_gb: int = 0
    running_vms: int = 0
    workload: int = 0


def node_usage(conn: sa.Connection, host: str, node: str) -> Usage:
    """Sum of the flavors of the live instances holding resources on ``host``/``node``."""
    query = sa.select(
        sa.func.count(),
        sa.func.coalesce(sa.func.sum(_I.c.vcpus), 0),
        sa.func.coalesce(sa.func.sum(_I.c.memory_mb), 0),
        sa.func.coalesce(sa.func.sum(_I.c.root_gb + _I.c.ephemeral_gb), 0),
        sa.func.coalesce(
            sa.func.sum(sa.case((_I.c.task_state.in_(_WORKLOAD_TASKS), 1), else_=0)), 0
        ),
    ).where(
        live(_I),
        _I.c.host == host,
        _I.c.node == node,
        sa.or_(_I.c.vm_state.is_(None), _I.c.vm_state.not_in(_FREE_STATES)),
    )
    count, vcpus, memory, disk, workload = conn.execute(query).one()
    return Usage(int(vcpus), int(memory), int(disk), int(count), int(workload))


def find_node(conn: sa.Connection, host: str, node: str) -> sa.RowMapping | None:
    """The live compute node ``node`` of ``host``."""
    query = sa.select(_N).where(live(_N), _N.c.host == host, _N.c.hypervisor_hostname == node)
    return conn.execute(query).mappings().first()


def save_node(conn: sa.Connection, node_id: int | None, values: dict[str, Any]) -> int:
    """Insert (``node_id`` None) or update a compute node; returns its id."""
    if node_id is None:
        key = conn.execute(sa.insert(_N).values(created_at=utcnow(), **values)).inserted_primary_key
        assert key is not None
        return int(key[0])
    conn.execute(sa.update(_N).where(_N.c.id == node_id).values(updated_at=utcnow(), **values))
    return node_id
