"""Instance actions and their events (cell DB ``instance_actions``/``instance_actions_events``).

The servers API starts an action per user request (create, delete, stop, ...); compute and
conductor record events in it (``compute__do_build_and_run_instance`` with Success/Error and a
traceback); the os-instance-actions API lists actions and shows one with its events. Actions
are never soft-deleted with the instance, so they stay readable after deletion.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa

from openkeel.db.schema import cell as cell_schema
from openkeel.db.schema.columns import utcnow
from openkeel.domain.actions import ActionEvent, InstanceAction
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
    add_action(
        conn,
        instance_uuid,
        action,
        request_id=request_id,
        user_id=user_id,
        project_id=project_id,
        now=now,
    )
    found = get_action(conn, instance_uuid, request_id)
    assert found is not None
    return found


def add_action(
    conn: sa.Connection,
    instance_uuid: str,
    action: str,
    *,
    request_id: str,
    user_id: str | None,
    project_id: str | None,
    now: datetime | None = None,
) -> None:
    """``start_action`` without reading the action back."""
    start = now or utcnow()
    conn.execute(
        _INSERT_ACTION_SQL,
        {
            "instance_uuid": instance_uuid,
            "action": action,
            "request_id": request_id,
            "user_id": user_id,
            "project_id": project_id,
            "start_time": start,
            "created_at": start,
            "deleted": 0,
        },
    )


# Statements of every build (conductor and compute) are built once: building and cache-keying
# a statement costs more than running it.
_NEWEST_FIRST = (_A.c.created_at.desc(), _A.c.id.desc())
_BY_REQUEST = (
    _A.c.instance_uuid == sa.bindparam("uuid"),
    _A.c.request_id == sa.bindparam("request_id"),
)
_INSERT_ACTION_SQL = sa.insert(_A)
_GET_ACTION_SQL = sa.select(_A).where(*_BY_REQUEST).order_by(*_NEWEST_FIRST).limit(1)
_ACTION_ID_SQL = sa.select(_A.c.id).where(*_BY_REQUEST).order_by(*_NEWEST_FIRST).limit(1)
_LAST_ACTION_ID_SQL = (
    sa.select(_A.c.id).where(_A.c.instance_uuid == sa.bindparam("uuid")).order_by(*_NEWEST_FIRST)
).limit(1)
_TOUCH_ACTION_SQL = (
    sa.update(_A).where(_A.c.id == sa.bindparam("action_id")).values(updated_at=sa.bindparam("now"))
)
_FAIL_ACTION_SQL = (
    sa.update(_A)
    .where(_A.c.id == sa.bindparam("action_id"))
    .values(message=sa.bindparam("new_message"))
)
_FAIL_TOUCH_ACTION_SQL = (
    sa.update(_A)
    .where(_A.c.id == sa.bindparam("action_id"))
    .values(message=sa.bindparam("new_message"), updated_at=sa.bindparam("now"))
)
_INSERT_EVENT_SQL = sa.insert(_E)
_GET_EVENT_SQL = sa.select(_E).where(_E.c.id == sa.bindparam("event_id"))
_OPEN_EVENT_SQL = (
    sa.select(_E.c.id)
    .where(
        _E.c.action_id == sa.bindparam("action_id"),
        _E.c.event == sa.bindparam("event"),
        _E.c.deleted == 0,
    )
    .order_by(_E.c.id.desc())
    .limit(1)
)
_FINISH_EVENT_SQL = (
    sa.update(_E)
    .where(_E.c.id == sa.bindparam("event_id"))
    .values(
        finish_time=sa.bindparam("now"),
        result=sa.bindparam("new_result"),
        traceback=sa.bindparam("new_traceback"),
        details=sa.bindparam("new_details"),
        updated_at=sa.bindparam("now"),
    )
)


def action_exists(conn: sa.Connection, instance_uuid: str, request_id: str) -> bool:
    """Whether the instance has an action with this request id."""
    params = {"uuid": instance_uuid, "request_id": request_id}
    return conn.execute(_ACTION_ID_SQL, params).first() is not None


def get_action(conn: sa.Connection, instance_uuid: str, request_id: str) -> InstanceAction | None:
    """The newest action of the instance with this request id, or None."""
    params = {"uuid": instance_uuid, "request_id": request_id}
    row = conn.execute(_GET_ACTION_SQL, params).first()
    return _action(row) if row is not None else None


def _find_action_id(
    conn: sa.Connection, instance_uuid: str, request_id: str, fallback_to_last: bool
) -> tuple[int, bool]:
    """(action id, whether it was found by request id)."""
    params = {"uuid": instance_uuid, "request_id": request_id}
    action_id = conn.execute(_ACTION_ID_SQL, params).scalar()
    if action_id is not None:
        return action_id, True
    if fallback_to_last:
        action_id = conn.execute(_LAST_ACTION_ID_SQL, params).scalar()
        if action_id is not None:
            return action_id, False
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
    event_id = record_event_start(
        conn,
        instance_uuid,
        request_id,
        event,
        host=host,
        now=now,
        fallback_to_last=fallback_to_last,
    )
    return _event(conn.execute(_GET_EVENT_SQL, {"event_id": event_id}).one())


def record_event_start(
    conn: sa.Connection,
    instance_uuid: str,
    request_id: str,
    event: str,
    *,
    host: str | None = None,
    now: datetime | None = None,
    fallback_to_last: bool = False,
) -> int:
    """``start_event`` without reading the event back; returns its id."""
    start = now or utcnow()
    action_id, by_request = _find_action_id(conn, instance_uuid, request_id, fallback_to_last)
    result = conn.execute(
        _INSERT_EVENT_SQL,
        {
            "action_id": action_id,
            "event": event,
            "start_time": start,
            "host": host,
            "created_at": start,
            "deleted": 0,
        },
    )
    if by_request:
        conn.execute(_TOUCH_ACTION_SQL, {"action_id": action_id, "now": start})
    event_id: int = result.inserted_primary_key[0]  # type: ignore[index]
    return event_id


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
    event_id = record_event_finish(
        conn,
        instance_uuid,
        request_id,
        event,
        result=result,
        traceback=traceback,
        details=details,
        now=now,
        fallback_to_last=fallback_to_last,
    )
    return _event(conn.execute(_GET_EVENT_SQL, {"event_id": event_id}).one())


def record_event_finish(
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
) -> int:
    """``finish_event`` without reading the event back; returns its id."""
    finish = now or utcnow()
    action_id, by_request = _find_action_id(conn, instance_uuid, request_id, fallback_to_last)
    event_id = conn.execute(_OPEN_EVENT_SQL, {"action_id": action_id, "event": event}).scalar()
    if event_id is None:
        raise InstanceActionEventNotFound(action_id, event)
    conn.execute(
        _FINISH_EVENT_SQL,
        {
            "event_id": event_id,
            "now": finish,
            "new_result": result,
            "new_traceback": traceback,
            "new_details": details,
        },
    )
    failed = result.lower() == ERROR_RESULT.lower()
    if failed and by_request:
        params = {"action_id": action_id, "new_message": ERROR_RESULT, "now": finish}
        conn.execute(_FAIL_TOUCH_ACTION_SQL, params)
    elif failed:
        conn.execute(_FAIL_ACTION_SQL, {"action_id": action_id, "new_message": ERROR_RESULT})
    elif by_request:
        conn.execute(_TOUCH_ACTION_SQL, {"action_id": action_id, "now": finish})
    return int(event_id)


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
