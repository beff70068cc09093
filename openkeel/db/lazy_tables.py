"""Tables a component creates on first use (the embedded services' own MetaData: images,
identity, networks, volumes, fixed IPs), created by one process at a time.

Several processes starting together on one database (two compute roles, API workers, a
conductor) each find a table missing and create it: PostgreSQL then refuses the second
``CREATE TABLE`` (a duplicate row in ``pg_type``), MySQL answers "table already exists", and
the process exits at start-up. ``schema_lock`` holds a database lock while a process checks and
creates: PostgreSQL's transaction advisory lock (its DDL is transactional, so the lock ends
with the commit that makes the tables visible), MySQL/MariaDB's named lock ``GET_LOCK`` (its DDL
commits by itself; the lock is released at the end), SQLite's write lock (the engine begins
every writing transaction with ``BEGIN IMMEDIATE``).
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from contextlib import contextmanager

import sqlalchemy as sa

LOCK_NAME = "openkeel_lazy_tables"
PG_LOCK_KEY = zlib.crc32(LOCK_NAME.encode())  # one advisory lock key for every such table
MYSQL_LOCK_TIMEOUT_S = 60


class SchemaLockTimeout(RuntimeError):
    """Another process held the schema lock longer than ``MYSQL_LOCK_TIMEOUT_S``."""


@contextmanager
def schema_lock(engine: sa.Engine) -> Iterator[sa.Connection]:
    """A connection in a transaction that holds the lazy-tables lock of ``engine``'s database."""
    with engine.begin() as conn:
        dialect = conn.dialect.name
        if dialect == "postgresql":
            conn.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": PG_LOCK_KEY})
        elif dialect in ("mysql", "mariadb"):
            got = conn.execute(
                sa.text("SELECT GET_LOCK(:name, :timeout)"),
                {"name": LOCK_NAME, "timeout": MYSQL_LOCK_TIMEOUT_S},
            ).scalar()
            if got != 1:
                raise SchemaLockTimeout(f"Lock {LOCK_NAME} not granted in {MYSQL_LOCK_TIMEOUT_S} s")
        try:
            yield conn
        finally:
            if dialect in ("mysql", "mariadb"):
                conn.execute(sa.text("SELECT RELEASE_LOCK(:name)"), {"name": LOCK_NAME})


def create_missing(engine: sa.Engine, metadata: sa.MetaData) -> None:
    """Create the tables of ``metadata`` that ``engine``'s database lacks, under the lock."""
    with schema_lock(engine) as conn:
        metadata.create_all(conn, checkfirst=True)
