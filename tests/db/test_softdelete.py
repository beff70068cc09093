"""Nova's soft delete: ``deleted`` = row id, ``deleted_at`` = now, and unique keys that include ``deleted``."""

from __future__ import annotations

import datetime
from collections.abc import Iterator

import pytest
import sqlalchemy as sa

from openkeel.db import softdelete
from openkeel.db.engine import make_engine
from openkeel.db.schema import cell

quotas = cell.quotas


@pytest.fixture
def engine(db_url: str) -> Iterator[sa.Engine]:
    """A database with just the tables these tests touch."""
    engine = make_engine(db_url)
    cell.metadata.create_all(engine, tables=[quotas, cell.tags])
    yield engine
    engine.dispose()


def add_quota(connection: sa.Connection, project: str, limit: int) -> int:
    result = connection.execute(
        quotas.insert().values(project_id=project, resource="cores", hard_limit=limit)
    )
    key = result.inserted_primary_key
    assert key is not None
    return int(key[0])


def test_soft_delete_marks_the_row_with_its_id_and_the_time(engine: sa.Engine) -> None:
    stamp = datetime.datetime(2020, 1, 1)
    with engine.begin() as connection:
        first = add_quota(connection, "p1", 1)
        other = add_quota(connection, "p2", 2)
        connection.execute(quotas.update().values(updated_at=stamp))
        count = softdelete.soft_delete(connection, quotas, quotas.c.project_id == "p1")
    assert count == 1
    with engine.connect() as connection:
        rows = {row.id: row for row in connection.execute(sa.select(quotas))}
    assert rows[first].deleted == first
    assert rows[first].deleted_at is not None and rows[first].deleted_at.tzinfo is None
    assert rows[first].updated_at == stamp  # oslo.db's Query.soft_delete keeps updated_at
    assert rows[other].deleted == 0 and rows[other].deleted_at is None


def test_soft_deleted_rows_are_not_deleted_twice(engine: sa.Engine) -> None:
    with engine.begin() as connection:
        add_quota(connection, "p1", 1)
        assert softdelete.soft_delete(connection, quotas) == 1
        assert softdelete.soft_delete(connection, quotas) == 0


def test_unique_constraint_including_deleted_allows_recreating(engine: sa.Engine) -> None:
    with engine.begin() as connection:
        first = add_quota(connection, "p1", 1)
        softdelete.soft_delete(connection, quotas, quotas.c.id == first)
        second = add_quota(connection, "p1", 2)
        softdelete.soft_delete(connection, quotas, quotas.c.id == second)
        add_quota(connection, "p1", 3)
    with engine.connect() as connection:
        live = connection.execute(sa.select(quotas.c.hard_limit).where(softdelete.live(quotas)))
        assert live.scalars().all() == [3]


def test_unique_constraint_rejects_a_second_live_row(engine: sa.Engine) -> None:
    with engine.begin() as connection:
        add_quota(connection, "p1", 1)
    with pytest.raises(sa.exc.IntegrityError), engine.begin() as connection:
        add_quota(connection, "p1", 2)


@pytest.mark.parametrize(("mode", "expected"), [("no", [2]), ("only", [1]), ("yes", [1, 2])])
def test_read_deleted_modes(
    engine: sa.Engine, mode: softdelete.ReadDeleted, expected: list[int]
) -> None:
    with engine.begin() as connection:
        first = add_quota(connection, "p1", 1)
        softdelete.soft_delete(connection, quotas, quotas.c.id == first)
        add_quota(connection, "p1", 2)
        clause = softdelete.read_deleted_clause(quotas, mode)
        query = sa.select(quotas.c.hard_limit).where(clause).order_by(quotas.c.hard_limit)
        assert connection.execute(query).scalars().all() == expected


def test_tables_without_soft_delete_columns_are_refused() -> None:
    assert not softdelete.is_soft_deletable(cell.tags)
    assert softdelete.is_soft_deletable(cell.instances)
    with pytest.raises(ValueError):
        softdelete.soft_delete_statement(cell.tags)


def test_unknown_read_deleted_mode_is_refused() -> None:
    with pytest.raises(ValueError):
        softdelete.read_deleted_clause(quotas, "maybe")  # type: ignore[arg-type]
