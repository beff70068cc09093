"""Engine factory for the API and cell databases.

``make_engine`` accepts the URLs found in nova.conf (``[database] connection``
and ``[api_database] connection``) and applies per-backend settings that make
the engine safe to share between the threads of a worker pool.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy import event, pool
from sqlalchemy.engine import URL, make_url

SQLITE_BUSY_TIMEOUT_MS = 30_000
# oslo.db's defaults, which Nova runs with.
MYSQL_SQL_MODE = "TRADITIONAL"
POOL_RECYCLE_SECONDS = 3600
MYSQL_READ_TIMEOUT_SECONDS = 60


def normalize_url(url: str | URL) -> URL:
    """Map a Nova-style database URL onto the driver openkeel ships with."""
    parsed = make_url(url)
    backend = parsed.get_backend_name()
    driver = parsed.get_driver_name()
    if backend == "mysql":
        parsed = parsed.set(drivername="mysql+pymysql")
        if "charset" not in parsed.query:
            parsed = parsed.update_query_dict({"charset": "utf8mb4"})
    elif backend in ("postgresql", "postgres") and driver in ("", "psycopg2", "postgres"):
        parsed = parsed.set(drivername="postgresql+psycopg2")
    return parsed


def make_engine(url: str | URL) -> sa.Engine:
    """Create an engine for ``url`` with Nova-compatible per-backend settings."""
    parsed = normalize_url(url)
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        return _make_sqlite_engine(parsed)
    if backend == "mysql":
        return _make_mysql_engine(parsed)
    # JIT compilation of the list queries on a freshly filled database cost seconds for
    # queries that run in milliseconds; OLTP queries never gain from it.
    connect_args = {"options": "-c jit=off"} if backend == "postgresql" else {}
    return sa.create_engine(
        parsed, pool_pre_ping=True, pool_recycle=POOL_RECYCLE_SECONDS, connect_args=connect_args
    )


def is_sqlite_memory(url: URL) -> bool:
    """Whether ``url`` names a private in-memory SQLite database."""
    return url.get_backend_name() == "sqlite" and url.database in (None, "", ":memory:")


def _make_sqlite_engine(url: URL) -> sa.Engine:
    connect_args: dict[str, Any] = {
        # Connections move between the threads of the pool.
        "check_same_thread": False,
        "timeout": SQLITE_BUSY_TIMEOUT_MS / 1000,
    }
    if is_sqlite_memory(url):
        # The database lives in its one connection: every thread must use that
        # connection, one at a time (a nested checkout waits for pool_timeout).
        engine = sa.create_engine(
            url,
            connect_args=connect_args,
            poolclass=pool.QueuePool,
            pool_size=1,
            max_overflow=0,
            pool_recycle=-1,
        )
    else:
        engine = sa.create_engine(url, connect_args=connect_args, poolclass=pool.QueuePool)
    event.listen(engine, "connect", _configure_sqlite_connection)
    event.listen(engine, "begin", _begin_sqlite_transaction)
    return engine


def _configure_sqlite_connection(dbapi_connection: Any, _record: Any) -> None:
    # Take over transaction control from pysqlite (see _begin_sqlite_transaction).
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA synchronous=NORMAL")
    finally:
        cursor.close()


READ_ONLY_OPTION = "openkeel_read_only"


def reader(engine: sa.Engine) -> sa.Engine:
    """The same engine (same pool) for transactions that only read.

    On SQLite their transactions start with a deferred ``BEGIN``, so readers neither take nor
    wait for the write lock (WAL lets them read beside a writer); elsewhere it changes nothing.
    Made once per engine and kept on it: hot read paths call this on every request.
    """
    if engine.get_execution_options().get(READ_ONLY_OPTION):
        return engine
    found: sa.Engine | None = engine.__dict__.get(_READER_ATTRIBUTE)
    if found is None:
        found = engine.execution_options(**{READ_ONLY_OPTION: True})
        engine.__dict__[_READER_ATTRIBUTE] = found
    return found


_READER_ATTRIBUTE = "_openkeel_reader"


def _begin_sqlite_transaction(connection: sa.Connection) -> None:
    # BEGIN IMMEDIATE takes the write lock up front, so concurrent writers wait
    # on busy_timeout instead of failing with SQLITE_BUSY when a deferred read
    # transaction later tries to write. Pure readers (``reader(engine)``) skip it.
    if connection.get_execution_options().get(READ_ONLY_OPTION):
        connection.exec_driver_sql("BEGIN")
    else:
        connection.exec_driver_sql("BEGIN IMMEDIATE")


def _make_mysql_engine(url: URL) -> sa.Engine:
    return sa.create_engine(
        url,
        pool_pre_ping=True,
        pool_recycle=POOL_RECYCLE_SECONDS,
        connect_args={
            "init_command": f"SET SESSION sql_mode = '{MYSQL_SQL_MODE}'",
            # A reply that never comes (seen once: a pool pre-ping blocked for minutes on an
            # idle connection) fails the read instead of hanging the thread forever; the
            # pool then replaces the connection. No OLTP statement here runs for a minute.
            "read_timeout": MYSQL_READ_TIMEOUT_SECONDS,
            "write_timeout": MYSQL_READ_TIMEOUT_SECONDS,
        },
    )
