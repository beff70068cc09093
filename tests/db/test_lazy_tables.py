"""Processes starting together on one database, each creating the embedded services' tables
on first use (images, identity, networks, volumes, fixed IPs).

Without a lock, on PostgreSQL every racer but one fails its CREATE TABLE (duplicate key in
``pg_type``) and MariaDB answers "table already exists": a second compute role started beside
the first exited at start-up (seen by benchmarks/scale_out.py). Here four engines (four
processes' pools) race through every ``install_tables``; none may fail.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
import sqlalchemy as sa

from openkeel.db import identity_tables, image_tables, network_tables, volume_tables
from openkeel.db.engine import make_engine
from openkeel.network import schema as fixed_ips
from tests.db.backends import SERVER_BACKENDS, Backend, DatabaseFactory

RACERS = 4
INSTALLS: tuple[Callable[[sa.Engine], object], ...] = (
    image_tables.install_tables,
    identity_tables.install_tables,
    network_tables.install_tables,
    volume_tables.install_tables,
    fixed_ips.ensure_schema,
)


def _race(install: Callable[[sa.Engine], None], engines: list[sa.Engine]) -> None:
    """``install`` run at once by one thread per engine."""
    threads = [threading.Thread(target=install, args=(e,)) for e in engines]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


@pytest.mark.parametrize(
    "backend",
    ["sqlite", *(pytest.param(b, marks=getattr(pytest.mark, b)) for b in SERVER_BACKENDS)],
)
def test_racing_processes_create_the_lazy_tables_once(
    backend: Backend, database_factory: DatabaseFactory
) -> None:
    url = database_factory.url(backend, "lazy_tables")
    engines = [make_engine(url) for _ in range(RACERS)]
    start = threading.Barrier(RACERS)
    failures: list[BaseException] = []
    created: list[object] = []

    def install(engine: sa.Engine) -> None:
        start.wait()
        try:
            created.append(image_tables.install_tables(engine))
            for other in INSTALLS[1:]:
                other(engine)
        except Exception as exc:
            failures.append(exc)

    try:
        _race(install, engines)
        assert failures == []
        assert created.count(True) == 1  # one racer made openkeel_images (and seeds it)
        tables = set(sa.inspect(engines[0]).get_table_names())
        for metadata in (image_tables.metadata, identity_tables.metadata,
                         network_tables.metadata, volume_tables.metadata, fixed_ips.metadata):  # fmt: skip
            assert set(metadata.tables) <= tables
    finally:
        for engine in engines:
            engine.dispose()


@pytest.mark.parametrize(
    "backend",
    ["sqlite", *(pytest.param(b, marks=getattr(pytest.mark, b)) for b in SERVER_BACKENDS)],
)
def test_racing_processes_add_a_new_column_once(
    backend: Backend, database_factory: DatabaseFactory
) -> None:
    """A volumes table made before ``migration_status`` existed gets the column from exactly
    one of the racers; none fails."""
    url = database_factory.url(backend, "lazy_columns")
    engines = [make_engine(url) for _ in range(RACERS)]
    older = sa.MetaData()
    table = volume_tables.volumes_table
    sa.Table(table.name, older, *(c._copy() for c in table.columns if c.name != "migration_status"))
    older.create_all(engines[0])
    start = threading.Barrier(RACERS)
    failures: list[BaseException] = []

    def install(engine: sa.Engine) -> None:
        start.wait()
        try:
            volume_tables.install_tables(engine)
        except Exception as exc:
            failures.append(exc)

    try:
        _race(install, engines)
        assert failures == []
        columns = {c["name"] for c in sa.inspect(engines[0]).get_columns(table.name)}
        assert "migration_status" in columns
    finally:
        for engine in engines:
            engine.dispose()
