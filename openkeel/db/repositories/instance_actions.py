"""Instance actions and their events (cell DB ``instance_actions``/``instance_actions_events``).

The servers API starts an action per user request (create, delete, stop, ...); compute and
conductor record events in it (``compute__do_build_and_run_instance`` with Success/Error and a
traceback); the os-instance-actions API lists actions and shows one with its events. Actions
are never soft-deleted with the instance, so they stay readable after deletion.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from openkeel.db.schema import cell as cell_schema
from openkeel.db.schema.columns import utcnow
from openkeel.domain.errors import Invalid, NotFound
from openkeel.domain.instances import InstanceActionNotFound

_A = cell_schema.instance_actions
_E = cell_schema.instance_actions_events
ERROR_RESULT = "Error"


class InstanceActionEventNotFound(NotFound):
    def __init__(self, action_id: int, event: str) -> None:
        super().__init__(f"Event {event} not found for action id {action_id}")


class ActionMarkerNotFound(Invalid):
    """``?marker=`` of the instance actions API names no action (400, Nova's text)."""

    def __init__(self, marker: str) -> None:
        super().__init__(f"Marker {marker} could not be found.")


@dataclass(frozen=True)
class ActionEvent:
    id: int
    action_id: int
    event: str
    start_time: datetime | None
    finish_time: datetime | None
    result: str | None
    traceback: str | None
    host: str | None
    details: str | None


@dataclass(frozen=True)
class InstanceAction:
    id: int
    instance_uuid: str
    action: str
    request_id: str
    user_id: str | None
    project_id: str | None
    start_time: datetime | None
    finish_time: datetime | None
    message: str | None
    created_at: datetime | None
    updated_at: datetime | None


def _action(row: Any) -> InstanceAction:
    return InstanceAction(
        id=row.id,
        instance_uuid=row.instance_uuid,
        action=row.action,
        request_id=row.request_id,
        user_id=row.user_id,
        project_id=row.project_id,
        start_time=row.start_time,
        finish_time=row.finish_time,
        message=row.message,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


def _event(row: Any) -> ActionEvent:
    return ActionEvent(
        id=row.id,
        action_id=row.action_id,
        event=row.event,
        start_time=row.start_time,
        finish_time=row.finish_time,
        result=row.result,
        traceback=row.traceback,
        host=row.host,
        details=row.details,
    )


def start_action(
    conn: sa.Connection,
    instance_uuid: str,
    action: str,
    *,
    request_id: str,
    user_id: str | None,
    project_id: str | None,
    now: datetime | None = None,
) -> InstanceAction:
    """Record that a user request started ``action`` on the instance."""
    start = now or utcnow()
    conn.execute(
        sa.insert(_A).values(
            instance_uuid=instance_uuid,
            action=action,
            request_id=request_id,
            user_id=user_id,
            project_id=project_id,
            start_time=start,
            created_at=start,
            deleted=0,
        )
    )
    found = get_action(conn, instance_uuid, request_id)
    assert found is not None
    return found


def get_action(conn: sa.Connection, instance_uuid: str, request_id: str) -> InstanceAction | None:
    """The newest action of the instance with this request id, or None."""
    query = (
        sa.select(_A)
        .where(_A.c.instance_uuid == instance_uuid, _A.c.request_id == request_id)
        .order_by(_A.c.created_at.desc(), _A.c.id.desc())
    )
    row = conn.execute(query).first()
    return _action(row) if row is not None else None


def _last_action(conn: sa.Connection, instance_uuid: str) -> InstanceAction | None:
    query = (
        sa.select(_A)
        .where(_A.c.instance_uuid == instance_uuid)
        .order_by(_A.c.created_at.desc(), _A.c.id.desc())
    )
    row = conn.execute(query).first()
    return _action(row) if row is not None else None


def _find_action(
    conn: sa.Connection, instance_uuid: str, request_id: str, fallback_to_last: bool
) -> tuple[InstanceAction, bool]:
    """(action, whether it was found by request id)."""
    action = get_action(conn, instance_uuid, request_id)
    if action is not None:
        return action, True
    if fallback_to_last:
        # A restarted compute has a new request id: finish the instance's last action.
        action = _last_action(conn, instance_uuid)
        if action is not None:
            return action, False
    raise InstanceActionNotFound(request_id, instance_uuid)


def finish_action(
    conn: sa.Connection, instance_uuid: str, request_id: str, *, now: datetime | None = None
) -> None:
    """Set the action's finish time."""
    finish = now or utcnow()
    result = conn.execute(
        sa.update(_A)
        .where(_A.c.instance_uuid == instance_uuid, _A.c.request_id == request_id)
        .values(finish_time=finish, updated_at=finish)
    )
    if result.rowcount == 0:
        raise InstanceActionNotFound(request_id, instance_uuid)


def start_event(
    conn: sa.Connection,
    instance_uuid: str,
    request_id: str,
    event: str,
    *,
    host: str | None = None,
    now: datetime | None = None,
    fallback_to_last: bool = False,
) -> ActionEvent:
    """Start ``event`` (e.g. ``compute__do_build_and_run_instance``) in the request's action.

    ``fallback_to_last`` (service contexts without a project) uses the instance's last action
    when none has ``request_id``, without touching its ``updated_at``.
    """
    start = now or utcnow()
    action, by_request = _find_action(conn, instance_uuid, request_id, fallback_to_last)
    result = conn.execute(
        sa.insert(_E).values(
            action_id=action.id,
            event=event,
            start_time=start,
            host=host,
            created_at=start,
            deleted=0,
        )
    )
    if by_request:
        conn.execute(sa.update(_A).where(_A.c.id == action.id).values(updated_at=start))
    event_id = result.inserted_primary_key[0]  # type: ignore[index]
    return _event(conn.execute(sa.select(_E).where(_E.c.id == event_id)).one())


def finish_event(
    conn: sa.Connection,
    instance_uuid: str,
    request_id: str,
    event: str,
    *,
    result: str,
    traceback: str | None = None,
    details: str | None = None,
    now: datetime | None = None,
    fallback_to_last: bool = False,
) -> ActionEvent:
    """Finish ``event`` with ``result`` ("Success" or "Error"); an error marks the action."""
    finish = now or utcnow()
    action, by_request = _find_action(conn, instance_uuid, request_id, fallback_to_last)
    row = conn.execute(
        sa.select(_E.c.id)
        .where(_E.c.action_id == action.id, _E.c.event == event, _E.c.deleted == 0)
        .order_by(_E.c.id.desc())
    ).first()
    if row is None:
        raise InstanceActionEventNotFound(action.id, event)
    conn.execute(
        sa.update(_E)
        .where(_E.c.id == row.id)
        .values(
            finish_time=finish,
            result=result,
            traceback=traceback,
            details=details,
            updated_at=finish,
        )
    )
    action_values: dict[str, Any] = {}
    if result.lower() == ERROR_RESULT.lower():
        action_values["message"] = ERROR_RESULT
    if by_request:
        action_values["updated_at"] = finish
    if action_values:
        conn.execute(sa.update(_A).where(_A.c.id == action.id).values(action_values))
    return _event(conn.execute(sa.select(_E).where(_E.c.id == row.id)).one())


def list_actions(
    conn: sa.Connection,
    instance_uuid: str,
    *,
    limit: int | None = None,
    marker: str | None = None,
    changes_since: datetime | None = None,
    changes_before: datetime | None = None,
) -> list[InstanceAction]:
    """Actions of the instance, newest first; ``marker`` is a request id."""
    if limit == 0:
        return []
    query = sa.select(_A).where(_A.c.instance_uuid == instance_uuid)
    if changes_since is not None:
        query = query.where(_A.c.updated_at >= changes_since)
    if changes_before is not None:
        query = query.where(_A.c.updated_at <= changes_before)
    if marker is not None:
        found = get_action(conn, instance_uuid, marker)
        if found is None:
            raise ActionMarkerNotFound(marker)
        query = query.where(
            sa.or_(
                _A.c.created_at < found.created_at,
                sa.and_(_A.c.created_at == found.created_at, _A.c.id < found.id),
            )
        )
    query = query.order_by(_A.c.created_at.desc(), _A.c.id.desc())
    if limit is not None:
        query = query.limit(limit)
    return [_action(row) for row in conn.execute(query)]


def list_events(conn: sa.Connection, action_id: int) -> list[ActionEvent]:
    """Events of an action, newest first."""
    query = (
        sa.select(_E)
        .where(_E.c.action_id == action_id)
        .order_by(_E.c.created_at.desc(), _E.c.id.desc())
    )
    return [_event(row) for row in conn.execute(query)]
