"""Usage audit periods (Nova's ``last_completed_audit_period``): pure date arithmetic.

Used by the compute periodic task ``instance_usage_audit`` (which period to audit) and by
the os-instance_usage_audit_log API (which period to report). A unit is ``hour``, ``day``,
``month`` or ``year``, optionally with an offset (``day@18``: days begin at 18:00 UTC,
``month@15``: on the 15th, ``year@3``: on March 1st). Datetimes are naive UTC.
"""

from __future__ import annotations

import datetime


def _previous_month(year: int, month: int) -> tuple[int, int]:
    return (year - 1, 12) if month == 1 else (year, month - 1)


def last_completed_audit_period(
    unit: str, before: datetime.datetime
) -> tuple[datetime.datetime, datetime.datetime]:
    """(begin, end) of the most recent period of ``unit`` completed before ``before``."""
    name, _, offset_text = unit.partition("@")
    offset = int(offset_text) if offset_text else 0
    now = before
    if name == "month":
        day = offset or 1
        end = datetime.datetime(now.year, now.month, day)
        if end >= now:
            end = datetime.datetime(*_previous_month(now.year, now.month), day)
        begin = datetime.datetime(*_previous_month(end.year, end.month), day)
    elif name == "year":
        month = offset or 1
        end = datetime.datetime(now.year, month, 1)
        if end >= now:
            end = datetime.datetime(now.year - 1, month, 1)
        begin = datetime.datetime(end.year - 1, month, 1)
    elif name == "day":
        end = datetime.datetime(now.year, now.month, now.day, offset)
        if end >= now:
            end -= datetime.timedelta(days=1)
        begin = end - datetime.timedelta(days=1)
    else:
        end = now.replace(minute=offset, second=0, microsecond=0)
        if end >= now:
            end -= datetime.timedelta(hours=1)
        begin = end - datetime.timedelta(hours=1)
    return begin, end
