"""AggregateRepository on SQLite, PostgreSQL and MariaDB: create with zone metadata, name
uniqueness, metadata merge/delete, host membership, zone look-ups and delete."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import sqlalchemy as sa

from openkeel.db.engine import make_engine
from openkeel.db.repositories.aggregates import AggregateRepository
from openkeel.db.schema import api as api_schema
from openkeel.domain.errors import Conflict


@pytest.fixture
def repo(db_url: str) -> Iterator[AggregateRepository]:
    engine = make_engine(db_url)
    api_schema.metadata.create_all(engine)
    yield AggregateRepository(engine)
    engine.dispose()


def test_create_get_list_delete(repo: AggregateRepository) -> None:
    created = repo.create("a1", "u-1", {"availability_zone": "z1"})
    assert (created.name, created.uuid, created.availability_zone) == ("a1", "u-1", "z1")
    assert created.created_at is not None and created.hosts == ()
    assert repo.get(created.id) == created
    assert repo.get(2**40) is None and repo.get(-1) is None
    assert [a.id for a in repo.list_all()] == [created.id]
    assert repo.delete(created.id) is True
    assert repo.get(created.id) is None and repo.delete(created.id) is False


def test_names_are_unique(repo: AggregateRepository) -> None:
    first = repo.create("a1", "u-1", {})
    second = repo.create("a2", "u-2", {})
    with pytest.raises(Conflict) as caught:
        repo.create("a1", "u-3", {})
    assert caught.value.message == "Aggregate a1 already exists."
    with pytest.raises(Conflict):
        repo.rename(second.id, "a1")
    repo.rename(first.id, "a1")
    repo.rename(first.id, "b1")
    got = repo.get(first.id)
    assert got is not None and got.name == "b1" and got.updated_at is not None


def test_metadata_and_hosts(repo: AggregateRepository) -> None:
    agg = repo.create("a1", "u-1", {"availability_zone": "z1"})
    repo.update_metadata(agg.id, {"k": "v", "availability_zone": "z2"})
    repo.update_metadata(agg.id, {"k": None, "missing": None, "x": "y"})
    assert repo.add_host(agg.id, "h1") and repo.add_host(agg.id, "h2")
    assert repo.add_host(agg.id, "h1") is False
    got = repo.get(agg.id)
    assert got is not None
    assert (got.metadata, got.hosts) == ({"availability_zone": "z2", "x": "y"}, ("h1", "h2"))
    other = repo.create("a2", "u-2", {"availability_zone": "z3"})
    repo.add_host(other.id, "h2")
    assert repo.zones_of_hosts(["h2", "nope"]) == [(agg.id, "z2"), (other.id, "z3")]
    assert repo.zones_of_hosts([]) == []
    assert repo.remove_host(agg.id, "h1") is True and repo.remove_host(agg.id, "h1") is False


def test_host_cell(repo: AggregateRepository, db_url: str) -> None:
    engine = make_engine(db_url)
    with engine.begin() as conn:
        key = conn.execute(
            sa.insert(api_schema.cell_mappings).values(uuid="cell-1", name="c")
        ).inserted_primary_key
        assert key is not None
        conn.execute(sa.insert(api_schema.host_mappings).values(cell_id=key[0], host="h1"))
    engine.dispose()
    assert repo.host_cell("h1") == "cell-1" and repo.host_cell("h2") is None
