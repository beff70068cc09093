"""The instance data the compute and conductor roles read and write, in one place.

A thin facade over the instance data layer (openkeel.db.repositories.instances and the
instance action/fault repositories): one transaction per call, compare-and-swap state changes
(``expected_task_state``), faults built from exceptions as Nova does, action events as Nova's
``wrap_instance_event`` records them. Used by compute operations, periodic tasks and conductor.
"""

from __future__ import annotations

import traceback
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from openkeel.compute.clock import Clock
from openkeel.db.repositories import instances as instance_repo
from openkeel.db.schema import cell as cell_schema
from openkeel.db.softdelete import ReadDeleted, live
from openkeel.domain.instances import UNSET, Instance, InstanceUpdate

_I = cell_schema.instances
_FAULTS = cell_schema.instance_faults
_ACTIONS = cell_schema.instance_actions
_EVENTS = cell_schema.instance_actions_events

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


class InstanceRecords:
    """Instances of one cell database."""

    def __init__(self, cell_db: sa.Engine, clock: Clock) -> None:
        self.db = cell_db
        self.clock = clock

    def get(self, uuid: str, read_deleted: ReadDeleted = "no") -> Instance:
        with self.db.connect() as conn:
            return instance_repo.get(conn, uuid, read_deleted=read_deleted)

    def create(self, instance: Instance) -> Instance:
        with self.db.begin() as conn:
            return instance_repo.create(conn, instance)

    def update(
        self,
        uuid: str,
        changes: InstanceUpdate,
        *,
        expected_task_state: ExpectedState = UNSET,
        expected_vm_state: ExpectedState = UNSET,
    ) -> Instance:
        """Apply ``changes`` if the states are as expected (raises the CAS conflict errors)."""
        with self.db.begin() as conn:
            return instance_repo.update(
                conn,
                uuid,
                changes,
                expected_task_state=expected_task_state,
                expected_vm_state=expected_vm_state,
            )

    def soft_delete(self, uuid: str) -> Instance:
        with self.db.begin() as conn:
            return instance_repo.soft_delete(conn, uuid)

    def on_host(self, host: str) -> list[Instance]:
        """Live instances whose ``host`` is ``host``."""
        query = sa.select(_I.c.uuid).where(live(_I), _I.c.host == host).order_by(_I.c.id)
        with self.db.connect() as conn:
            uuids = list(conn.execute(query).scalars())
            return [instance_repo.get(conn, uuid) for uuid in uuids]

    def soft_deleted_before(self, cutoff: Any) -> list[Instance]:
        """Live instances in soft-delete state, last updated before ``cutoff``."""
        query = sa.select(_I.c.uuid).where(
            live(_I), _I.c.vm_state == "soft-delete", _I.c.updated_at < cutoff
        )
        with self.db.connect() as conn:
            return [instance_repo.get(conn, u) for u in conn.execute(query).scalars()]

    # --- faults ------------------------------------------------------------------------------

    def add_fault(self, uuid: str, exc: BaseException, host: str | None) -> None:
        """Record ``exc`` as the instance's latest fault."""
        code, message, details = fault_fields(exc)
        self.add_fault_values(uuid, code, message, details, host)

    def add_fault_values(
        self, uuid: str, code: int, message: str, details: str | None, host: str | None
    ) -> None:
        row = {
            "instance_uuid": uuid,
            "code": code,
            "message": message[:MAX_FAULT_MESSAGE],
            "details": details,
            "host": host,
            "created_at": self.clock.now(),
            "deleted": 0,
        }
        with self.db.begin() as conn:
            conn.execute(sa.insert(_FAULTS).values(row))

    # --- instance actions ----------------------------------------------------------------------

    def ensure_action(
        self, uuid: str, action: str, request_id: str, user_id: str | None, project_id: str | None
    ) -> None:
        """Create the action for ``request_id`` unless the API already did."""
        with self.db.begin() as conn:
            if self._action_id(conn, uuid, request_id) is None:
                conn.execute(
                    sa.insert(_ACTIONS).values(
                        action=action,
                        instance_uuid=uuid,
                        request_id=request_id,
                        user_id=user_id,
                        project_id=project_id,
                        start_time=self.clock.now(),
                        created_at=self.clock.now(),
                        deleted=0,
                    )
                )

    @staticmethod
    def _action_id(conn: sa.Connection, uuid: str, request_id: str) -> int | None:
        query = sa.select(_ACTIONS.c.id).where(
            _ACTIONS.c.instance_uuid == uuid, _ACTIONS.c.request_id == request_id
        )
        return conn.execute(query.order_by(_ACTIONS.c.id.desc())).scalars().first()

    def event_start(self, uuid: str, request_id: str, event: str, host: str | None) -> None:
        """Record the start of ``event`` under the action of ``request_id`` (if it exists)."""
        now = self.clock.now()
        with self.db.begin() as conn:
            action_id = self._action_id(conn, uuid, request_id)
            if action_id is None:
                return
            conn.execute(
                sa.insert(_EVENTS).values(
                    event=event,
                    action_id=action_id,
                    start_time=now,
                    host=host,
                    created_at=now,
                    deleted=0,
                )
            )
            conn.execute(
                sa.update(_ACTIONS).where(_ACTIONS.c.id == action_id).values(updated_at=now)
            )

    def event_finish(
        self, uuid: str, request_id: str, event: str, exc: BaseException | None = None
    ) -> None:
        """Finish ``event``: result Success, or Error with the traceback."""
        now = self.clock.now()
        values: dict[str, Any] = {"finish_time": now, "updated_at": now, "result": "Success"}
        if exc is not None:
            values["result"] = "Error"
            values["traceback"] = "".join(traceback.format_exception(exc))
            values["details"] = fault_fields(exc)[1]
        with self.db.begin() as conn:
            action_id = self._action_id(conn, uuid, request_id)
            if action_id is None:
                return
            newest = (
                sa.select(sa.func.max(_EVENTS.c.id))
                .where(_EVENTS.c.action_id == action_id, _EVENTS.c.event == event)
                .scalar_subquery()
            )
            conn.execute(sa.update(_EVENTS).where(_EVENTS.c.id == newest).values(values))
            action_values: dict[str, Any] = {"updated_at": now}
            if exc is not None:
                action_values["message"] = "Error"
            conn.execute(
                sa.update(_ACTIONS).where(_ACTIONS.c.id == action_id).values(action_values)
            )
