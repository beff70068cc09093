"""SQL for ``task_log`` rows of a cell DB: one row per task, host and period (Nova's TaskLog).

Used by the compute periodic task ``instance_usage_audit`` (begin, end) and the
os-instance_usage_audit_log API (list of one period).
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

import sqlalchemy as sa

from openkeel.db.schema import cell as cell_schema
from openkeel.db.schema.columns import utcnow
from openkeel.db.softdelete import live

_T = cell_schema.task_log


@dataclass(frozen=True)
class TaskLogRecord:
    """One task's run on one host for one period."""

    host: str
    state: str
    task_items: int
    errors: int
    message: str


def _period(task_name: str, begin: datetime.datetime, end: datetime.datetime) -> sa.ColumnElement[bool]:  # fmt: skip
    return sa.and_(
        live(_T), _T.c.task_name == task_name,
        _T.c.period_beginning == begin, _T.c.period_ending == end,
    )  # fmt: skip


def for_period(
    conn: sa.Connection, task_name: str, begin: datetime.datetime, end: datetime.datetime,
    host: str | None = None,
) -> list[TaskLogRecord]:  # fmt: skip
    """The rows of ``task_name`` for the period (of ``host`` only when given), by id."""
    query = sa.select(_T).where(_period(task_name, begin, end))
    if host is not None:
        query = query.where(_T.c.host == host)
    return [
        TaskLogRecord(r.host, r.state, r.task_items or 0, r.errors or 0, r.message)
        for r in conn.execute(query.order_by(_T.c.id))
    ]


def begin_task(
    conn: sa.Connection, task_name: str, begin: datetime.datetime, end: datetime.datetime,
    host: str, task_items: int, message: str,
) -> bool:  # fmt: skip
    """Insert the RUNNING row; False when one exists already (another run has it)."""
    try:
        with conn.begin_nested():
            conn.execute(sa.insert(_T).values(
                task_name=task_name, state="RUNNING", host=host, period_beginning=begin,
                period_ending=end, message=message, task_items=task_items, errors=0,
                created_at=utcnow(), deleted=0,
            ))  # fmt: skip
    except sa.exc.IntegrityError:
        return False
    return True


def end_task(
    conn: sa.Connection, task_name: str, begin: datetime.datetime, end: datetime.datetime,
    host: str, errors: int, message: str,
) -> None:  # fmt: skip
    """Mark the host's row DONE with its error count and message."""
    conn.execute(
        sa.update(_T).where(_period(task_name, begin, end), _T.c.host == host)
        .values(state="DONE", errors=errors, message=message, updated_at=utcnow())
    )  # fmt: skip
