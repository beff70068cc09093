"""How the embedded Placement runs: its engine and the alias cache inside Placement's queries."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy import pool

from openkeel.clients import placement_embedded
from openkeel.clients.placement_embedded import EmbeddedPlacement, _CachedAliases

METADATA = sa.MetaData()
TABLE = sa.Table("t", METADATA, sa.Column("id", sa.Integer, primary_key=True))


def test_engine_is_pooled_wal_and_keeps_oslo_db_events(tmp_path: Path) -> None:
    with EmbeddedPlacement(tmp_path) as service:
        engine = service._engine
        assert isinstance(engine.pool, pool.QueuePool)
        with engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 1  # NORMAL
        # oslo.db's explicit BEGIN: a transaction that starts with a read holds its snapshot
        # (Placement's read-then-write transactions rely on it)
        with engine.begin() as conn:
            conn.exec_driver_sql("SELECT 1")
            assert conn.connection.dbapi_connection.in_transaction


def test_duplicate_rows_still_raise_oslo_db_errors(tmp_path: Path) -> None:
    from oslo_db import exception as db_exc

    with EmbeddedPlacement(tmp_path) as service, service._engine.begin() as conn:
        conn.exec_driver_sql("INSERT INTO projects (external_id) VALUES ('p')")
        with pytest.raises(db_exc.DBDuplicateEntry):
            conn.exec_driver_sql("INSERT INTO projects (external_id) VALUES ('p')")


def first(shim: _CachedAliases) -> sa.Alias:
    alias: sa.Alias = shim.alias(TABLE, name="a")
    return alias


def second(shim: _CachedAliases) -> sa.Alias:
    alias: sa.Alias = shim.alias(TABLE, name="a")
    return alias


def test_table_aliases_are_made_once_per_call_site() -> None:
    shim = _CachedAliases()
    assert first(shim) is first(shim)
    assert first(shim) is not second(shim)  # same table and name, another line
    # Aliases from two lines stay two FROM objects (no correlation between them), as built
    # fresh on every call.
    inner = sa.select(first(shim).c.id).scalar_subquery()
    query = sa.select(second(shim).c.id).where(second(shim).c.id == inner)
    outer_fresh, inner_fresh = TABLE.alias("a"), TABLE.alias("a")
    fresh = sa.select(outer_fresh.c.id).where(
        outer_fresh.c.id == sa.select(inner_fresh.c.id).scalar_subquery()
    )
    assert str(query) == str(fresh)
    subquery = sa.select(TABLE).subquery()
    assert shim.alias(subquery, name="s") is not shim.alias(subquery, name="s")
    assert shim.select is sa.select


def test_placement_modules_use_the_alias_cache(tmp_path: Path) -> None:
    from placement.objects import research_context

    with EmbeddedPlacement(tmp_path):
        assert isinstance(research_context.sa, _CachedAliases)
    for name in placement_embedded._ALIASING_MODULES:
        module = __import__(f"placement.objects.{name}", fromlist=["sa"])
        assert isinstance(module.sa, _CachedAliases)
