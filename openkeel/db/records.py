"""The instance data the compute and conductor roles read and write, in one place.

A thin facade over the instance data layer (openkeel.db.repositories.instances and the
instance action/fault repositories): one transaction per call, compare-and-swap state changes
(``expected_task_state``), faults built from exceptions as Nova does, action events as Nova's
``wrap_instance_event`` records them. Used by compute operations, periodic tasks and conductor.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import sqlalchemy as sa

from openkeel.db.engine import reader
from openkeel.db.repositories import block_devices, instance_actions, instance_faults
from openkeel.db.repositories import instances as instance_repo
from openkeel.db.schema import cell as cell_schema
from openkeel.db.softdelete import ReadDeleted, live
from openkeel.domain.errors import NotFound
from openkeel.domain.instances import UNSET, Instance, InstanceNotFound, InstanceUpdate
from openkeel.domain.states import VmState
from openkeel.runtime.clock import Clock

LOG = logging.getLogger(__name__)

_I = cell_schema.instances

ExpectedState = str | None | Sequence[str | None] | Any

MAX_FAULT_MESSAGE = 255


def fault_fields(exc: BaseException) -> tuple[int, str, str]:
    """(code, message, details) of a fault for ``exc``, as Nova's exception_to_dict.

    Exceptions of ours with a message keep it; anything else shows only its class name
    (the details carry the traceback for admins).
    """
    code = int(getattr(exc, "code", 500) or 500)
    message = getattr(exc, "message", None)
    if not isinstance(message, str) or not message:
        message = type(exc).__name__
    details = "".join(traceback.format_exception(exc)) if code == 500 else message
    return code, message[:MAX_FAULT_MESSAGE], details


def _still_live(conn: sa.Connection, uuids: list[str]) -> list[Instance]:
    """The instances of ``uuids`` still there when read one by one: on PostgreSQL (READ
    COMMITTED) another role may delete one after the query that found it."""
    found = []
    for uuid in uuids:
        try:
            found.append(instance_repo.get(conn, uuid))
        except InstanceNotFound:
            continue
    return found


@dataclass(frozen=True)
class ActionStart:
    """A user request's instance action, recorded where the instance is created."""

    action: str
    request_id: str
    user_id: str | None
    project_id: str | None


class SaveObserver(Protocol):
    """Told of each instance save (the role's ``instance.update`` notifications, as Nova's
    ``Instance.save`` sends them); ``wants`` says whether to read the instance around a save
    of ``changes`` at all. ``saved`` never raises."""

    def wants(self, changes: InstanceUpdate) -> bool: ...

    def saved(self, before: Instance, after: Instance) -> None: ...


class InstanceRecords:
    """Instances of one cell database; with ``observer``, each save is reported to it."""

    def __init__(
        self, cell_db: sa.Engine, clock: Clock, observer: SaveObserver | None = None
    ) -> None:
        self.db = cell_db
        self.clock = clock
        self.observer = observer

    def get(self, uuid: str, read_deleted: ReadDeleted = "no") -> Instance:
        with reader(self.db).connect() as conn:
            return instance_repo.get(conn, uuid, read_deleted=read_deleted)

    def create(
        self,
        instance: Instance,
        *,
        action: ActionStart | None = None,
        block_device_mappings: Sequence[Mapping[str, Any]] = (),
    ) -> Instance:
        """Insert ``instance`` with the block device mappings it was requested with; with
        ``action``, also its action (unless it exists) in the same transaction."""
        with self.db.begin() as conn:
            created = instance_repo.create(conn, instance)
            block_devices.add_requested(conn, instance.uuid, tuple(block_device_mappings))
            if action is not None:
                self._ensure_action(conn, instance.uuid, action)
            return created

    def update(
        self,
        uuid: str,
        changes: InstanceUpdate,
        *,
        expected_task_state: ExpectedState = UNSET,
        expected_vm_state: ExpectedState = UNSET,
    ) -> Instance:
        """Apply ``changes`` if the states are as expected (raises the CAS conflict errors);
        ``updated_at`` comes from this host's clock, which the periodic tasks compare with."""
        before = self._before(uuid, changes)
        with self.db.begin() as conn:
            after = instance_repo.update(
                conn,
                uuid,
                changes,
                expected_task_state=expected_task_state,
                expected_vm_state=expected_vm_state,
                now=self.clock.now(),
            )
        if before is not None and self.observer is not None:
            self.observer.saved(before, after)
        return after

    def apply(
        self,
        uuid: str,
        changes: InstanceUpdate,
        *,
        expected_task_state: ExpectedState = UNSET,
        expected_vm_state: ExpectedState = UNSET,
    ) -> None:
        """``update`` without reading the instance back (for callers that do not use it)."""
        if self.observer is not None and self.observer.wants(changes):
            self.update(
                uuid,
                changes,
                expected_task_state=expected_task_state,
                expected_vm_state=expected_vm_state,
            )
            return
        with self.db.begin() as conn:
            instance_repo.apply(
                conn,
                uuid,
                changes,
                expected_task_state=expected_task_state,
                expected_vm_state=expected_vm_state,
                now=self.clock.now(),
            )

    def _before(self, uuid: str, changes: InstanceUpdate) -> Instance | None:
        """The instance before a save the observer wants to hear of (None: not wanted, or
        gone, in which case the save raises)."""
        if self.observer is None or not self.observer.wants(changes):
            return None
        try:
            return self.get(uuid)
        except InstanceNotFound:
            return None

    def soft_delete(self, uuid: str) -> Instance:
        with self.db.begin() as conn:
            return instance_repo.soft_delete(conn, uuid)

    def delete_row(self, uuid: str, changes: InstanceUpdate | None = None) -> Instance:
        """Mark the row DELETED (with ``changes``) and soft-delete it in one transaction: never
        a live row that says DELETED (a database lost between two transactions left one,
        listed for good)."""
        final = changes or InstanceUpdate(vm_state=VmState.DELETED.value, task_state=None)
        with self.db.begin() as conn:
            instance_repo.update(conn, uuid, final)
            return instance_repo.soft_delete(conn, uuid)

    def on_host(self, host: str) -> list[Instance]:
        """Live instances whose ``host`` is ``host``."""
        query = sa.select(_I.c.uuid).where(live(_I), _I.c.host == host).order_by(_I.c.id)
        with reader(self.db).connect() as conn:
            return _still_live(conn, list(conn.execute(query).scalars()))

    def soft_deleted_before(self, cutoff: Any) -> list[Instance]:
        """Live instances in soft-delete state, last updated before ``cutoff``."""
        query = sa.select(_I.c.uuid).where(
            live(_I), _I.c.vm_state == "soft-delete", _I.c.updated_at < cutoff
        )
        with reader(self.db).connect() as conn:
            return _still_live(conn, list(conn.execute(query).scalars()))

    # --- faults ------------------------------------------------------------------------------

    def add_fault(self, uuid: str, exc: BaseException, host: str | None) -> None:
        """Record ``exc`` as the instance's latest fault."""
        code, message, details = fault_fields(exc)
        self.add_fault_values(uuid, code, message, details, host)

    def add_fault_values(
        self, uuid: str, code: int, message: str, details: str | None, host: str | None
    ) -> None:
        with self.db.begin() as conn:
            instance_faults.create(
                conn, uuid, code=code, message=message, details=details, host=host
            )

    # --- instance actions ----------------------------------------------------------------------

    def ensure_action(
        self, uuid: str, action: str, request_id: str, user_id: str | None, project_id: str | None
    ) -> None:
        """Create the action for ``request_id`` unless the API already did."""
        with self.db.begin() as conn:
            self._ensure_action(conn, uuid, ActionStart(action, request_id, user_id, project_id))

    def _ensure_action(self, conn: sa.Connection, uuid: str, action: ActionStart) -> None:
        if not instance_actions.action_exists(conn, uuid, action.request_id):
            instance_actions.add_action(
                conn,
                uuid,
                action.action,
                request_id=action.request_id,
                user_id=action.user_id,
                project_id=action.project_id,
                now=self.clock.now(),
            )

    def event_start(self, uuid: str, request_id: str, event: str, host: str | None) -> None:
        """Record the start of ``event`` under the action of ``request_id`` (if it exists)."""
        try:
            with self.db.begin() as conn:
                instance_actions.record_event_start(
                    conn, uuid, request_id, event, host=host, now=self.clock.now()
                )
        except NotFound:
            LOG.debug("No action of request %s on %s for event %s", request_id, uuid, event)

    def event_finish(
        self, uuid: str, request_id: str, event: str, exc: BaseException | None = None
    ) -> None:
        """Finish ``event``: result Success, or Error with the traceback."""
        trace = None if exc is None else "".join(traceback.format_exception(exc))
        try:
            with self.db.begin() as conn:
                instance_actions.record_event_finish(
                    conn,
                    uuid,
                    request_id,
                    event,
                    result="Success" if exc is None else "Error",
                    traceback=trace,
                    details=None if exc is None else fault_fields(exc)[1],
                    now=self.clock.now(),
                )
        except NotFound:
            LOG.debug("No event %s of request %s on %s", event, request_id, uuid)
