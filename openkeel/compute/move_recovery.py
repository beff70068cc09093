"""Settle resizes, cold and live migrations that nobody is working on any more.

Start-up reconciliation (``reconcile.init_instances``) calls ``recover_moves`` first: a move
whose migration is still in progress and whose instance points at this host has nobody working
on it any more. The stale-operation periodic task calls it for moves that have not changed for
``stale_task_timeout`` and that no thread of this service holds (a conductor that died
mid-move, a cast lost with a broker restart). Left alone its migration would stay in progress for good, its consumer's
Placement allocation (the source side) would never be freed, and the server could never be
confirmed, reverted or moved again. Each one is settled as the move's own failure handling
would have settled it:

- not moved yet (the instance still points at the source: pre-migrating, migrating, or a live
  migration that never switched over): rolled back — the source allocation goes back to the
  instance (replacing the destination claim), migration ``error``, no task state, a fault;
- an interrupted confirm: back to VERIFY_RESIZE (migration ``finished``), so the user or the
  automatic confirm window can confirm again;
- an interrupted revert (migration ``reverting``, or the instance still in task
  ``resize_reverting``): finished, from the step it had reached (``resume_revert``) — the
  destination destroys the new guest and marks the migration ``reverted``, the source restores
  the old guest, flavor and allocations. Both steps ignore a late duplicate of themselves;
- anything else (the guest had moved): migration ``error`` and the server in ERROR with a
  fault on the destination, as Nova does for a move that fails after the guest moved, with the
  new flavor its destination claim holds (``fail_moved``); the migration consumer's
  allocation (the source side) is freed.
"""

from __future__ import annotations

import datetime
import logging

from openkeel.compute.host import ComputeHost
from openkeel.compute.operations import resize_verify
from openkeel.compute.operations.outcome import set_error
from openkeel.compute.operations.resize import (
    compute_client,
    fail_migration,
    fail_moved,
    roll_back_move,
    set_migration,
)
from openkeel.db.engine import reader
from openkeel.db.repositories import migrations
from openkeel.domain import migrations as status
from openkeel.domain.errors import ComputeError
from openkeel.domain.instances import Instance, InstanceNotFound, InstanceUpdate
from openkeel.domain.migrations import Migration
from openkeel.domain.states import TaskState, VmState
from openkeel.rpc.message import CallContext
from openkeel.rpc.messages import compute as m

LOG = logging.getLogger(__name__)

IN_PROGRESS = (
    status.PRE_MIGRATING,
    status.MIGRATING,
    status.POST_MIGRATING,
    status.CONFIRMING,
    status.REVERTING,
    status.ACCEPTED,
    status.QUEUED,
    status.PREPARING,
    status.RUNNING,
)
# Statuses in which the guest has certainly not left the source yet.
_NOT_MOVED = (
    status.PRE_MIGRATING,
    status.MIGRATING,
    status.ACCEPTED,
    status.QUEUED,
    status.PREPARING,
    status.RUNNING,
)


class MoveInterrupted(ComputeError):
    """Fault of a move the compute service's restart interrupted."""

    def __init__(self, migration: Migration) -> None:
        super().__init__(
            f"The {migration.migration_type} of the instance (migration {migration.id}, status "
            f"{migration.status}) was interrupted: no service was working on it any more."
        )


def recover_moves(host: ComputeHost, updated_before: datetime.datetime | None = None) -> list[str]:
    """Settle every in-progress move whose instance points at this host; their uuids.

    At start-up every one is settled. With ``updated_before`` (the stale-operation periodic
    task) only moves whose migration has not changed since then, and whose instance no thread
    of this service is working on.
    """
    with reader(host.records.db).connect() as conn:
        pending = migrations.list_migrations(conn, statuses=IN_PROGRESS, host=host.host)
    settled = []
    for migration in pending:
        stamp = migration.updated_at or migration.created_at
        if updated_before is not None and (stamp is None or stamp >= updated_before):
            continue
        try:
            with host.locks.try_hold(migration.instance_uuid) as idle:
                if idle and _recover(host, migration):
                    settled.append(migration.instance_uuid)
        except Exception:
            LOG.exception("Could not settle migration %s", migration.uuid)
    return settled


def _recover(host: ComputeHost, migration: Migration) -> bool:
    try:
        instance = host.records.get(migration.instance_uuid)
    except InstanceNotFound:
        fail_migration(host, migration)
        return False
    if instance.host != host.host:
        return False  # the host the instance points at settles it
    uuid = instance.uuid
    exc = MoveInterrupted(migration)
    LOG.warning("Settling %s of %s: %s", migration.status, uuid, exc)
    if migration.status == status.REVERTING:
        resume_revert(host, instance)
    elif migration.status == status.CONFIRMING:
        set_migration(host, migration, status=status.FINISHED)
        host.records.update(uuid, InstanceUpdate(vm_state=VmState.RESIZED.value, task_state=None))
    elif migration.status in _NOT_MOVED and instance.host == migration.source_compute:
        roll_back_move(host, uuid, migration, exc)
    else:
        fail_moved(host, uuid, migration, exc)
    return True


def resume_revert(host: ComputeHost, instance: Instance) -> None:
    """Finish the interrupted revertResize of ``instance`` from the step it had reached.

    Migration ``finished`` (the API died before it marked the migration) or ``reverting``: the
    destination step runs here (this host is the one the instance points at). Migration
    ``reverted``: the destination is done; the source step runs here when this host is the
    source (it had started: the instance points back at it), else it is cast to the source.
    Anything else cannot be a revert in progress: the server goes to ERROR.
    """
    uuid = instance.uuid
    context = CallContext(roles=("admin",))
    with reader(host.records.db).connect() as conn:
        found = migrations.list_migrations(conn, instance_uuid=uuid)
    migration = found[0] if found else None
    revertible = (status.FINISHED, status.REVERTING, status.REVERTED)
    if migration is None or migration.status not in revertible:
        LOG.warning("Instance %s was reverting with no migration to revert: ERROR", uuid)
        if migration is not None:
            fail_migration(host, migration)
        set_error(host, uuid, InterruptedRevert(migration))
        return
    LOG.warning("Finishing the interrupted revert of %s (migration %s)", uuid, migration.status)
    data = {"id": migration.id}
    if migration.status != status.REVERTED:
        if migration.status == status.FINISHED:
            migration = set_migration(host, migration, status=status.REVERTING)
        resize_verify.revert_resize(host, context, uuid, data, {})
    elif migration.source_compute == host.host:
        resize_verify.finish_revert_resize(host, context, uuid, data)
    else:
        to_source = m.FinishRevertResize(uuid, migration.to_primitive())
        compute_client(host).cast(context, migration.source_compute or "", to_source)


class InterruptedRevert(ComputeError):
    """Fault of a revert that cannot be finished (its migration is gone or settled)."""

    def __init__(self, migration: Migration | None) -> None:
        what = "no migration" if migration is None else f"migration status {migration.status}"
        super().__init__(f"The revert of the resize was interrupted and cannot go on ({what}).")


def is_reverting(instance: Instance) -> bool:
    return instance.task_state == TaskState.RESIZE_REVERTING.value


__all__ = ["IN_PROGRESS", "MoveInterrupted", "is_reverting", "recover_moves", "resume_revert"]
