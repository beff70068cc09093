"""Running a conductor task on one instance as a recorded action event, with rollback.

Shared by the move tasks (migrate_server, live_migrate_instance): find the instance's cell,
record the event's start, run the task, roll back and record the failure if it raises; and the
rollback both moves share, before anything reached a compute host.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from openkeel.clients.placement_errors import PlacementError
from openkeel.conductor.context import ConductorDeps
from openkeel.db.engine import reader
from openkeel.db.records import InstanceRecords
from openkeel.db.repositories import instance_mappings, migrations
from openkeel.domain import migrations as status
from openkeel.domain.instances import InstanceNotFound, InstanceUpdate
from openkeel.domain.migrations import Migration
from openkeel.notifications.instance_payloads import Initiator
from openkeel.rpc.message import CallContext

LOG = logging.getLogger(__name__)


def run_recorded(
    deps: ConductorDeps,
    context: CallContext,
    uuid: str,
    event: str,
    body: Callable[[InstanceRecords], None],
    rollback: Callable[[InstanceRecords, BaseException], None],
) -> None:
    """Run ``body`` in the instance's cell as action event ``event``; on failure ``rollback``."""
    with reader(deps.api_db).connect() as conn:
        cell_uuid = instance_mappings.get(conn, uuid).cell_uuid
    if cell_uuid is None:
        LOG.warning("Instance %s has no cell; nothing to do for %s", uuid, event)
        return
    records = deps.records(cell_uuid)
    records.event_start(uuid, context.request_id, event, None)
    failure: BaseException | None = None
    try:
        body(records)
    except Exception as exc:
        LOG.warning("%s of %s failed: %s", event, uuid, exc)
        failure = exc
        rollback(records, exc)
    records.event_finish(uuid, context.request_id, event, failure)


def roll_back_move(
    deps: ConductorDeps,
    records: InstanceRecords,
    uuid: str,
    migration: Migration | None,
    moved: bool,
    exc: BaseException,
) -> None:
    """A move that failed in the conductor: the allocations the migration took over go back
    to the instance (``moved``), the migration goes to ``error``, a fault is recorded and the
    task state cleared (the fault first, so it is there once the task state shows the end)."""
    if migration is not None:
        if moved:
            try:
                deps.placement.move_allocations(migration.uuid, uuid)
            except PlacementError:
                LOG.exception("Could not give %s its allocations back", uuid)
        with records.db.begin() as conn:
            migrations.update(conn, migration.id, status=status.ERROR)
    try:
        records.add_fault(uuid, exc, None)
        records.update(uuid, InstanceUpdate(task_state=None))
    except InstanceNotFound:
        LOG.info("Instance %s is gone; nothing to roll back", uuid)


def notify_task_error(
    deps: ConductorDeps,
    context: CallContext,
    records: InstanceRecords,
    uuid: str,
    method: str,
    spec: Mapping[str, Any],
    exc: BaseException,
) -> None:
    """``compute_task.<method>.error`` with the server's vm_state after the rollback."""
    if not deps.notifier.enabled:
        return
    try:
        state = records.get(uuid).vm_state
    except InstanceNotFound:
        state = None
    who = Initiator(context.request_id, context.user_id, context.project_id)
    deps.notifier.compute_task_error(method, uuid, {**spec, "instance_uuid": uuid}, state, exc, who)
