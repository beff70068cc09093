"""The request a log line belongs to, for every role's log handler.

A context variable holds who is being served: the API sets it for each request (the request
id at once, the user and project once authenticated), RPC servers set it from the message's
``CallContext`` while they dispatch it, so the conductor's and compute's lines for one API
request carry that request's id. :class:`RequestContextFilter`, attached to the handlers the
composition roots install (``openkeel.cmd.logs``), copies it onto each record.

Threads do not inherit context variables: code that hands request work to a pool runs it in
a copy of the caller's context (``contextvars.copy_context().run``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

NO_VALUE = "-"


@dataclass(frozen=True)
class LogContext:
    """The request a log line is about."""

    request_id: str
    user_id: str | None = None
    project_id: str | None = None

    @property
    def user_identity(self) -> str:
        """``"<user> <project>"`` with ``-`` for what is unknown (oslo.log's shape)."""
        return f"{self.user_id or NO_VALUE} {self.project_id or NO_VALUE}"


_CURRENT: ContextVar[LogContext | None] = ContextVar("openkeel_log_context", default=None)


def current() -> LogContext | None:
    """The request being served in this thread or task, if any."""
    return _CURRENT.get()


def set_current(context: LogContext | None) -> None:
    """Make ``context`` the current request until the end of this task or context copy.

    For an asyncio task (one per API request) or a context copy; plain threads use
    :func:`bound` so the value never outlives the work.
    """
    _CURRENT.set(context)


@contextmanager
def bound(context: LogContext | None) -> Iterator[None]:
    """``context`` is the current request inside the block; the previous one after it."""
    token = _CURRENT.set(context)
    try:
        yield
    finally:
        _CURRENT.reset(token)


class RequestContextFilter(logging.Filter):
    """Adds ``request_id``, ``user_id``, ``project_id`` and ``user_identity`` to records.

    Values passed in ``extra`` win; without a current request they are ``-``.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        """Annotate ``record``; never drops it."""
        context = _CURRENT.get()
        values = {
            "request_id": context.request_id if context else NO_VALUE,
            "user_id": (context.user_id if context else None) or NO_VALUE,
            "project_id": (context.project_id if context else None) or NO_VALUE,
            "user_identity": context.user_identity if context else f"{NO_VALUE} {NO_VALUE}",
        }
        for name, value in values.items():
            if not hasattr(record, name):
                setattr(record, name, value)
        return True
