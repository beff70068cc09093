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
- anything else (the guest had moved, or a revert was under way): migration ``error`` and the
  server in ERROR with a fault, as Nova does for a move that fails after the guest moved. The
  orphan-allocation audit then frees the migration consumer's allocation.
"""

from __future__ import annotations

import datetime
import logging

from openkeel.compute.host import ComputeHost
from openkeel.compute.operations.outcome import set_error
from openkeel.compute.operations.resize import roll_back_move, set_migration
from openkeel.db.engine import reader
from openkeel.db.repositories import migrations
from openkeel.domain import migrations as status
from openkeel.domain.errors import ComputeError
from openkeel.domain.instances import InstanceNotFound, InstanceUpdate
from openkeel.domain.migrations import Migration
from openkeel.domain.states import VmState

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
        set_migration(host, migration, status=status.ERROR)  # frees its consumer (audit)
        return False
    if instance.host != host.host:
        return False  # the host the instance points at settles it
    uuid = instance.uuid
    exc = MoveInterrupted(migration)
    LOG.warning("Settling %s of %s: %s", migration.status, uuid, exc)
    if migration.status == status.CONFIRMING:
        set_migration(host, migration, status=status.FINISHED)
        host.records.update(uuid, InstanceUpdate(vm_state=VmState.RESIZED.value, task_state=None))
    elif migration.status in _NOT_MOVED and instance.host == migration.source_compute:
        roll_back_move(host, uuid, migration, exc)
    else:
        set_migration(host, migration, status=status.ERROR)
        set_error(host, uuid, exc)
    return True


__all__ = ["IN_PROGRESS", "MoveInterrupted", "recover_moves"]
