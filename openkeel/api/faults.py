"""Errors to HTTP: Nova's fault bodies, chosen by exception class in one place.

Every error the API returns goes through :func:`fault_for`; handlers never build error bodies.
Domain errors carry their status. Infrastructure failures that are not the client's doing and
pass with time get a 503 that names them: storage full (SQLite "database or disk is full",
PostgreSQL disk_full, MySQL disk/table full, ``ENOSPC``) and a database that cannot be reached
(or stays locked or busy past its timeouts), and a message that could not be sent to another
role or got no answer in time (broker down, service gone).
Anything else is Nova's opaque 500 naming only the exception class.
"""

from __future__ import annotations

import errno
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass

import orjson
import sqlalchemy.exc as sa_exc

from openkeel.domain.errors import ComputeError
from openkeel.rpc.errors import MessagingError, MessagingTimeout, RemoteError

FAULT_KEYS = {
    400: "badRequest",
    401: "unauthorized",
    403: "forbidden",
    404: "itemNotFound",
    405: "badMethod",
    409: "conflictingRequest",
    413: "overLimit",
    415: "badMediaType",
    429: "overLimit",
    501: "notImplemented",
    503: "serviceUnavailable",
}

GONE_MESSAGE = "This resource is no longer available. No forwarding address is given."
NOT_FOUND_MESSAGE = "The resource could not be found."
# Nova's answer when a feature is not there (common.raise_feature_not_supported).
NOT_SUPPORTED_MESSAGE = "The requested functionality is not supported."
STORAGE_FULL_MESSAGE = "The compute service's storage is full; retry later."
DATABASE_UNAVAILABLE_MESSAGE = "The compute service's database is unavailable; retry later."
MESSAGING_UNAVAILABLE_MESSAGE = (
    "A compute service this request needs could not be reached ({}); retry later."
)
SUPPORT_TEXT = "Please contact the administrator"
FAULT_CONTENT_TYPE = b"application/json; charset=UTF-8"

STORAGE_FULL_TEXTS = ("database or disk is full", "No space left on device")
_SQLITE_FULL = 13
# Locked past the busy timeout, or the file cannot be opened: nothing the client did.
_SQLITE_UNAVAILABLE = frozenset({5, 6, 14})  # SQLITE_BUSY, SQLITE_LOCKED, SQLITE_CANTOPEN
_PG_DISK_FULL = "53100"
_MYSQL_FULL = frozenset({1021, 1114})  # ER_DISK_FULL, ER_RECORD_FILE_FULL
_MYSQL_UNREACHABLE = frozenset({2002, 2003, 2006, 2013, 2055})  # no server / connection lost
_OS_FULL = frozenset({errno.ENOSPC, errno.EDQUOT})


@dataclass(frozen=True)
class Fault:
    """An error response: status and Nova's one-key JSON body."""

    status: int
    message: str

    def body(self) -> bytes:
        """``{"<faultKey>": {"code": N, "message": "..."}}``."""
        key = FAULT_KEYS.get(self.status, "computeFault")
        return orjson.dumps({key: {"code": self.status, "message": self.message}})


STORAGE_FULL = Fault(503, STORAGE_FULL_MESSAGE)
DATABASE_UNAVAILABLE = Fault(503, DATABASE_UNAVAILABLE_MESSAGE)


def _domain(exc: BaseException) -> Fault | None:
    assert isinstance(exc, ComputeError)
    return Fault(exc.code, exc.message)


def _database(exc: BaseException) -> Fault | None:
    """A DBAPI error: storage full or database unreachable, else not classified."""
    assert isinstance(exc, sa_exc.DBAPIError)
    orig = exc.orig
    if isinstance(orig, sqlite3.Error):
        code = getattr(orig, "sqlite_errorcode", None)
        primary = code & 0xFF if isinstance(code, int) else None
        if primary == _SQLITE_FULL or STORAGE_FULL_TEXTS[0] in str(orig):
            return STORAGE_FULL
        return DATABASE_UNAVAILABLE if primary in _SQLITE_UNAVAILABLE else None
    if hasattr(orig, "pgcode"):  # psycopg2: server errors carry an SQLSTATE, network ones none
        pgcode = getattr(orig, "pgcode", None)
        if pgcode == _PG_DISK_FULL:
            return STORAGE_FULL
        unreachable = pgcode is None and isinstance(exc, sa_exc.OperationalError)
        return DATABASE_UNAVAILABLE if unreachable or exc.connection_invalidated else None
    code = orig.args[0] if orig is not None and orig.args else None
    if code in _MYSQL_FULL:
        return STORAGE_FULL
    if code in _MYSQL_UNREACHABLE or exc.connection_invalidated:
        return DATABASE_UNAVAILABLE
    return None


def _pool_timeout(exc: BaseException) -> Fault | None:
    """Every pooled connection stayed busy for ``pool_timeout`` seconds."""
    return DATABASE_UNAVAILABLE


def _os_error(exc: BaseException) -> Fault | None:
    assert isinstance(exc, OSError)
    return STORAGE_FULL if exc.errno in _OS_FULL else None


def _remote(exc: BaseException) -> Fault | None:
    """A failure of another role that only arrives as text (its class is not shared)."""
    assert isinstance(exc, RemoteError)
    return STORAGE_FULL if any(text in exc.value for text in STORAGE_FULL_TEXTS) else None


def _messaging(exc: BaseException) -> Fault | None:
    """Not sent (broker unreachable, transport closed) or not answered in time; a failure
    of the other role itself (RemoteError) stays a 500."""
    if isinstance(exc, RemoteError):
        return None
    reason = "no answer in time" if isinstance(exc, MessagingTimeout) else "messaging unavailable"
    return Fault(503, MESSAGING_UNAVAILABLE_MESSAGE.format(reason))


# Looked up along the exception's MRO: the most specific class that answers wins.
_CLASSIFIERS: dict[type[BaseException], Callable[[BaseException], Fault | None]] = {
    ComputeError: _domain,
    sa_exc.DBAPIError: _database,
    sa_exc.TimeoutError: _pool_timeout,
    OSError: _os_error,
    RemoteError: _remote,
    MessagingError: _messaging,
}


def fault_for(exc: BaseException) -> Fault:
    """The fault Nova returns for ``exc``; unknown exceptions become a 500 that names only
    the exception class, as Nova does."""
    for cls in type(exc).__mro__:
        classify = _CLASSIFIERS.get(cls)
        fault = classify(exc) if classify is not None else None
        if fault is not None:
            return fault
    return Fault(500, f"Unexpected API Error. {SUPPORT_TEXT}\n{type(exc)}")
