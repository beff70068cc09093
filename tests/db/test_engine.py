"""``make_engine``: Nova-style URLs, per-backend connection settings, use from a thread pool."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import sqlalchemy as sa

from openkeel.db.engine import make_engine, normalize_url
from tests.db.backends import DatabaseFactory


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("mysql://nova:pw@db/nova", "mysql+pymysql://nova:pw@db/nova?charset=utf8mb4"),
        ("mysql+pymysql://nova@db/nova", "mysql+pymysql://nova@db/nova?charset=utf8mb4"),
        ("mysql+pymysql://nova@db/nova?charset=utf8", "mysql+pymysql://nova@db/nova?charset=utf8"),
        ("postgresql://nova@db/nova", "postgresql+psycopg2://nova@db/nova"),
        ("postgresql+psycopg2://nova@db/nova", "postgresql+psycopg2://nova@db/nova"),
        ("sqlite:////var/lib/nova/nova.sqlite", "sqlite:////var/lib/nova/nova.sqlite"),
    ],
)
def test_normalize_url_picks_the_shipped_driver(url: str, expected: str) -> None:
    assert normalize_url(url).render_as_string(hide_password=False) == expected


def test_sqlite_uses_wal_and_enforces_foreign_keys(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'x.sqlite'}")
    try:
        with engine.connect() as connection:
            assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
            assert connection.exec_driver_sql("PRAGMA busy_timeout").scalar_one() >= 1000
    finally:
        engine.dispose()


def test_in_memory_sqlite_is_one_database_for_every_thread() -> None:
    engine = make_engine("sqlite://")
    table = sa.Table("t", sa.MetaData(), sa.Column("n", sa.Integer))
    table.create(engine)

    def insert(n: int) -> None:
        with engine.begin() as connection:
            connection.execute(table.insert().values(n=n))

    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(insert, range(20)))
    with engine.connect() as connection:
        assert connection.execute(sa.select(sa.func.count()).select_from(table)).scalar() == 20
    engine.dispose()


def test_concurrent_read_then_write_transactions_do_not_fail(db_url: str) -> None:
    """Each transaction reads, then writes: SQLite must queue them, not raise 'locked'."""
    engine = make_engine(db_url)
    table = sa.Table(
        "counter",
        sa.MetaData(),
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("n", sa.Integer),
    )
    table.create(engine)
    with engine.begin() as connection:
        connection.execute(table.insert().values(id=1, n=0))

    def increment(_: int) -> None:
        with engine.begin() as connection:
            query = sa.select(table.c.n).where(table.c.id == 1).with_for_update()
            current = connection.execute(query).scalar_one()
            connection.execute(table.update().values(n=current + 1))

    try:
        with ThreadPoolExecutor(max_workers=8) as pool:
            list(pool.map(increment, range(40)))
        with engine.connect() as connection:
            assert connection.execute(sa.select(table.c.n)).scalar_one() == 40
    finally:
        engine.dispose()


@pytest.mark.mariadb
def test_mariadb_connections_use_utf8mb4_and_strict_mode(database_factory: DatabaseFactory) -> None:
    url = database_factory.url("mariadb")
    engine = make_engine(url.replace("mysql+pymysql://", "mysql://"))
    try:
        with engine.connect() as connection:
            charset = connection.exec_driver_sql("SELECT @@character_set_connection").scalar()
            sql_mode = connection.exec_driver_sql("SELECT @@SESSION.sql_mode").scalar()
        assert charset == "utf8mb4"
        assert "STRICT_ALL_TABLES" in str(sql_mode)
    finally:
        engine.dispose()
