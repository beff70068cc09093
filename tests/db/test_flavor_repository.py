"""FlavorRepository on SQLite, PostgreSQL and MariaDB: visibility, filters, keyset paging,
conflicts, extra specs and access lists."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy as sa

from openkeel.db.engine import make_engine
from openkeel.db.repositories.flavors import FlavorRepository
from openkeel.db.schema import api as api_schema
from openkeel.domain.errors import Conflict, Invalid, NotFound
from openkeel.domain.flavors import Flavor, FlavorFilters, FlavorPage, NewFlavor, Viewer

ADMIN = Viewer("admin", is_admin=True)
DEMO = Viewer("demo", is_admin=False)
ALL = FlavorFilters(is_public=None)


@pytest.fixture
def engine(db_url: str) -> Iterator[sa.Engine]:
    engine = make_engine(db_url)
    api_schema.metadata.create_all(engine)
    yield engine
    engine.dispose()


@pytest.fixture
def repo(engine: sa.Engine) -> FlavorRepository:
    return FlavorRepository(engine)


def new(flavorid: str, name: str, ram: int = 512, public: bool = True) -> NewFlavor:
    return NewFlavor(
        flavorid=flavorid, name=name, memory_mb=ram, vcpus=1, root_gb=1, is_public=public
    )


def ids(flavors: list[Flavor]) -> list[str]:
    return [f.flavorid for f in flavors]


@pytest.fixture
def seeded(repo: FlavorRepository) -> FlavorRepository:
    repo.create(new("1", "tiny", 512))
    repo.create(new("2", "small", 1024))
    repo.create(new("3", "Shared", 512, public=False))
    repo.create(new("4", "secret", 2048, public=False))
    repo.add_project(repo.get(ADMIN, "3").id, "demo")
    return repo


def test_create_and_get(repo: FlavorRepository) -> None:
    created = repo.create(
        NewFlavor("x", "x", 1, 2, 3, ephemeral_gb=4, swap=5, rxtx_factor=1.5, description="d")
    )
    assert (created.memory_mb, created.vcpus, created.root_gb) == (1, 2, 3)
    assert (created.ephemeral_gb, created.swap, created.rxtx_factor) == (4, 5, 1.5)
    assert created.description == "d" and created.is_public and not created.disabled
    assert repo.get(DEMO, "x") == created


def test_conflicts(repo: FlavorRepository) -> None:
    repo.create(new("1", "a"))
    with pytest.raises(Conflict, match=r"^Flavor with ID 1 already exists\.$"):
        repo.create(new("1", "b"))
    with pytest.raises(Conflict, match=r"^Flavor with name a already exists\.$"):
        repo.create(new("2", "a"))
    with pytest.raises(Conflict, match=r"^Flavor with ID 1 already exists\.$"):
        repo.create(new("1", "a"))


def test_visibility(seeded: FlavorRepository) -> None:
    page = FlavorPage()
    assert ids(seeded.find(ADMIN, ALL, page, False)) == ["1", "2", "3", "4"]
    public = FlavorFilters(is_public=True, disabled=False)
    assert ids(seeded.find(DEMO, public, page, False)) == ["1", "2", "3"]
    assert ids(seeded.find(ADMIN, FlavorFilters(is_public=False), page, False)) == ["3", "4"]
    assert ids(seeded.find(ADMIN, FlavorFilters(), page, False)) == ["1", "2"]
    with pytest.raises(NotFound, match=r"^Flavor 4 could not be found\.$"):
        seeded.get(DEMO, "4")
    assert seeded.get(DEMO, "3").name == "Shared"


def test_filters(seeded: FlavorRepository, engine: sa.Engine) -> None:
    page = FlavorPage()

    def found(**filters: Any) -> list[str]:
        return ids(seeded.find(ADMIN, FlavorFilters(None, **filters), page, False))

    assert found(min_memory_mb=1000) == ["2", "4"]
    assert found(min_root_gb=2) == []
    mysql = engine.dialect.name == "mysql"
    # MySQL's REGEXP follows the column's case-insensitive collation, as under Nova.
    assert found(name_regex="^s") == (["2", "3", "4"] if mysql else ["2", "4"])
    # Nova escapes "|" on MySQL only; elsewhere it is an alternation.
    assert found(name_regex="a|e") == ([] if mysql else ["2", "3", "4"])


def test_keyset_paging(seeded: FlavorRepository) -> None:
    by_ram = FlavorPage(sort_key="memory_mb", limit=2)
    assert ids(seeded.find(ADMIN, ALL, by_ram, False)) == ["1", "3"]
    after = FlavorPage(sort_key="memory_mb", limit=2, marker="3")
    assert ids(seeded.find(ADMIN, ALL, after, False)) == ["2", "4"]
    desc = FlavorPage(sort_key="memory_mb", sort_dir="desc", marker="2")
    assert ids(seeded.find(ADMIN, ALL, desc, False)) == ["3", "1"]
    by_public = FlavorPage(sort_key="is_public", marker="3")
    assert ids(seeded.find(ADMIN, ALL, by_public, False)) == ["4", "1", "2"]
    by_description = FlavorPage(sort_key="description", marker="2")
    assert ids(seeded.find(ADMIN, ALL, by_description, False)) == ["3", "4"]
    with pytest.raises(Invalid, match=r"^marker \[4\] not found$"):
        seeded.find(DEMO, FlavorFilters(), FlavorPage(marker="4"), False)


def test_extra_specs(seeded: FlavorRepository) -> None:
    pk = seeded.get(ADMIN, "1").id
    seeded.set_extra_specs(pk, {"a": "1", "B": "2"})
    seeded.set_extra_specs(pk, {"a": "3", "b": "4"})
    assert seeded.get(ADMIN, "1").extra_specs == {"a": "3", "B": "2", "b": "4"}
    listed = seeded.find(ADMIN, ALL, FlavorPage(), True)
    assert [dict(f.extra_specs) for f in listed] == [{"a": "3", "B": "2", "b": "4"}, {}, {}, {}]
    seeded.delete_extra_spec(pk, "1", "a")
    with pytest.raises(NotFound, match=r"^Flavor 1 has no extra specs with key a\.$"):
        seeded.delete_extra_spec(pk, "1", "a")


def test_access_and_destroy(seeded: FlavorRepository, engine: sa.Engine) -> None:
    pk = seeded.get(ADMIN, "4").id
    assert seeded.add_project(pk, "p1") == ["p1"]
    assert seeded.add_project(pk, "p2") == ["p1", "p2"]
    with pytest.raises(Conflict, match=f"^Flavor access already exists for flavor {pk} "):
        seeded.add_project(pk, "p1")
    assert seeded.remove_project(pk, "p1") == ["p2"]
    with pytest.raises(NotFound, match=f"^Flavor access not found for {pk} / p1 combination.$"):
        seeded.remove_project(pk, "p1")
    seeded.set_extra_specs(pk, {"k": "v"})
    seeded.destroy("4")
    with pytest.raises(NotFound):
        seeded.destroy("4")
    with engine.connect() as conn:
        for table in (api_schema.flavor_projects, api_schema.flavor_extra_specs):
            count = conn.execute(
                sa.select(sa.func.count()).select_from(table).where(table.c.flavor_id == pk)
            ).scalar()
            assert count == 0


def test_update_description(seeded: FlavorRepository) -> None:
    assert seeded.update_description(ADMIN, "1", "hello").description == "hello"
    with pytest.raises(NotFound):
        seeded.update_description(DEMO, "4", "x")


# Refused by every database, by PostgreSQL only (Python accepts it), by MariaDB only.
REFUSED = {"sqlite": ["(((", "["], "postgresql": ["(((", "[", "(?P<a>x)", "a++"]}
REFUSED["mysql"] = ["(((", "[", "\\u0041"]


def test_a_pattern_the_database_refuses_is_a_400(
    seeded: FlavorRepository, engine: sa.Engine
) -> None:
    for pattern in REFUSED[engine.dialect.name]:
        message = (
            f"Invalid input for query parameters name. Value: {pattern}. "
            f"'{pattern}' is not a 'regex'"
        )
        with pytest.raises(Invalid) as caught:
            seeded.find(ADMIN, FlavorFilters(None, name_regex=pattern), FlavorPage(), False)
        assert str(caught.value) == message
    assert ids(seeded.find(ADMIN, FlavorFilters(None, name_regex="^t"), FlavorPage(), False)) == [
        "1"
    ]


def test_a_failing_database_is_not_blamed_on_the_pattern(
    seeded: FlavorRepository, engine: sa.Engine
) -> None:
    """An outage during a filtered list stays a database error (500/503), not a 400."""

    @sa.event.listens_for(engine, "before_cursor_execute")
    def broken(*_: Any) -> None:
        raise sa.exc.OperationalError("SELECT", {}, Exception("server has gone away"))

    try:
        with pytest.raises(sa.exc.OperationalError):
            seeded.find(ADMIN, FlavorFilters(None, name_regex="(((x"), FlavorPage(), False)
    finally:
        sa.event.remove(engine, "before_cursor_execute", broken)
