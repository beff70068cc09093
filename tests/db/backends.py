"""Database backends for tests: SQLite files and throwaway PostgreSQL / MariaDB databases.

Any test folder can reuse these. Import the fixtures into a ``conftest.py``::

    from tests.db.backends import database_factory, db_url  # noqa: F401

``db_url`` is parametrized over ``sqlite``, ``postgresql`` and ``mariadb`` and
gives each test an empty database. On the servers, databases are named
``openkeel_test_<random>[_<suffix>]``, created once per test session and
dropped at its end. An unreachable server skips the test locally and fails it
when the ``CI`` environment variable is set.
"""

from __future__ import annotations

import os
import secrets
import socket
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, NoReturn

import pytest
import sqlalchemy as sa

Backend = Literal["sqlite", "postgresql", "mariadb"]
BACKENDS: tuple[Backend, ...] = ("sqlite", "postgresql", "mariadb")
SERVER_BACKENDS: tuple[Backend, ...] = ("postgresql", "mariadb")
DATABASE_PREFIX = "openkeel_test_"


@dataclass(frozen=True)
class Server:
    """A local database server the tests may use."""

    backend: Backend
    label: str
    host: str
    port: int
    url_prefix: str
    admin_database: str

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    def url(self, database: str) -> str:
        """URL of ``database`` on this server, in the form nova.conf uses."""
        return f"{self.url_prefix}@{self.address}/{database}"


SERVERS: dict[Backend, Server] = {
    "postgresql": Server(
        "postgresql", "PostgreSQL", "127.0.0.1", 5432, "postgresql://postgres", "postgres"
    ),
    "mariadb": Server("mariadb", "MariaDB", "127.0.0.1", 3306, "mysql+pymysql://root", ""),
}


def backend_params() -> list[object]:
    """``pytest.param`` per backend, marked so ``-m "not mariadb"`` deselects."""
    return [
        pytest.param(backend, marks=[getattr(pytest.mark, backend)], id=backend)
        if backend in SERVERS
        else pytest.param(backend, id=backend)
        for backend in BACKENDS
    ]


def unavailable(server: Server, reason: str = "") -> NoReturn:
    """Skip the test (locally) or fail it (``CI`` set) because ``server`` is down."""
    message = (
        f"{server.label} not reachable at {server.address} — start it (see README) or run in CI"
    )
    if reason:
        message = f"{message} ({reason})"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def probe(server: Server) -> str | None:
    """None if ``server`` accepts a login, else why not."""
    try:
        with socket.create_connection((server.host, server.port), timeout=1):
            pass
        engine = _admin_engine(server)
        try:
            with engine.connect() as connection:
                connection.execute(sa.text("SELECT 1"))
        finally:
            engine.dispose()
    except (OSError, sa.exc.SQLAlchemyError) as exc:
        return str(exc).splitlines()[0]
    return None


def create_database(server: Server, name: str) -> str:
    """Create (or empty) database ``name`` on ``server``; return its URL."""
    _execute_admin(server, *_recreate_statements(server, name))
    return server.url(name)


def empty_postgresql_database(server: Server, name: str) -> str:
    """Drop everything in PostgreSQL database ``name`` (tables, ENUM types); return its URL."""
    engine = sa.create_engine(
        server.url(name), isolation_level="AUTOCOMMIT", poolclass=sa.pool.NullPool
    )
    try:
        with engine.connect() as connection:
            connection.execute(sa.text("DROP SCHEMA public CASCADE"))
            connection.execute(sa.text("CREATE SCHEMA public"))
    finally:
        engine.dispose()
    return server.url(name)


def drop_database(server: Server, name: str) -> None:
    """Drop database ``name`` on ``server`` (closing other sessions on PostgreSQL)."""
    force = " WITH (FORCE)" if server.backend == "postgresql" else ""
    _execute_admin(server, f"DROP DATABASE IF EXISTS {name}{force}")


@dataclass
class DatabaseFactory:
    """Hands out empty databases; drops the server ones in ``close``."""

    sqlite_dir: Path
    prefix: str = field(default_factory=lambda: DATABASE_PREFIX + secrets.token_hex(4))
    _created: dict[Backend, set[str]] = field(default_factory=dict)
    _problems: dict[Backend, str | None] = field(default_factory=dict)

    def name(self, suffix: str = "") -> str:
        """Database name for ``suffix`` in this session."""
        return f"{self.prefix}_{suffix}" if suffix else self.prefix

    def url(self, backend: Backend, suffix: str = "") -> str:
        """URL of an empty database (same ``suffix`` → same database, emptied again)."""
        name = self.name(suffix)
        if backend == "sqlite":
            return self._sqlite_url(name)
        server = self._require(backend)
        created = self._created.setdefault(backend, set())
        if name in created and backend == "postgresql":
            # Much cheaper than DROP/CREATE DATABASE, which copies template1.
            return empty_postgresql_database(server, name)
        created.add(name)
        return create_database(server, name)

    def close(self) -> None:
        """Drop every server database this factory created."""
        for backend, names in self._created.items():
            for name in names:
                drop_database(SERVERS[backend], name)
        self._created.clear()

    def _sqlite_url(self, name: str) -> str:
        path = self.sqlite_dir / f"{name}.sqlite"
        for stale in self.sqlite_dir.glob(f"{name}.sqlite*"):
            stale.unlink()
        return f"sqlite:///{path}"

    def _require(self, backend: Backend) -> Server:
        server = SERVERS[backend]
        if backend not in self._problems:
            self._problems[backend] = probe(server)
        problem = self._problems[backend]
        if problem is not None:
            unavailable(server, problem)
        return server


@pytest.fixture(scope="session")
def database_factory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DatabaseFactory]:
    """Session-wide source of empty test databases on every backend."""
    factory = DatabaseFactory(sqlite_dir=tmp_path_factory.mktemp("sqlite"))
    yield factory
    factory.close()


@pytest.fixture(params=backend_params())
def db_backend(request: pytest.FixtureRequest) -> Backend:
    """The backend under test: ``sqlite``, ``postgresql`` or ``mariadb``."""
    backend: Backend = request.param
    return backend


@pytest.fixture
def db_url(db_backend: Backend, database_factory: DatabaseFactory) -> str:
    """URL of an empty database on each backend in turn."""
    return database_factory.url(db_backend)


def _admin_engine(server: Server) -> sa.Engine:
    return sa.create_engine(
        server.url(server.admin_database),
        isolation_level="AUTOCOMMIT",
        poolclass=sa.pool.NullPool,
        connect_args={"connect_timeout": 3},
    )


def _execute_admin(server: Server, *statements: str) -> None:
    engine = _admin_engine(server)
    try:
        with engine.connect() as connection:
            for statement in statements:
                connection.execute(sa.text(statement))
    finally:
        engine.dispose()


def _recreate_statements(server: Server, name: str) -> list[str]:
    if server.backend == "postgresql":
        return [f"DROP DATABASE IF EXISTS {name} WITH (FORCE)", f"CREATE DATABASE {name}"]
    return [
        f"DROP DATABASE IF EXISTS {name}",
        f"CREATE DATABASE {name} CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci",
    ]
