"""Cell router on SQLite, PostgreSQL and MariaDB: routing by instance and host mappings, cell0,
listing merged over two cells with sort keys, limit and marker, down-cell detection, and quota
counts summed over cells."""

from __future__ import annotations

import uuid as uuidlib
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from openkeel.db import cells
from openkeel.db.cell_router import CellDown, CellRouter
from openkeel.db.engine import make_engine
from openkeel.db.repositories import host_mappings, instance_mappings
from openkeel.db.repositories import instance_list as listing
from openkeel.db.repositories import instances as repo
from openkeel.db.schema import api as api_schema
from openkeel.db.schema import cell as cell_schema
from openkeel.domain.instances import (
    FlavorSnapshot,
    HostMappingNotFound,
    Instance,
    InstanceNotFound,
    MarkerNotFound,
)
from tests.db.backends import Backend, DatabaseFactory

FLAVOR = FlavorSnapshot(flavorid="1", name="tiny", memory_mb=512, vcpus=1, root_gb=1, id=1)
T0 = datetime(2024, 1, 1)


@pytest.fixture
def setup(
    db_backend: Backend, database_factory: DatabaseFactory
) -> Iterator[tuple[CellRouter, str]]:
    api = make_engine(database_factory.url(db_backend, "rapi"))
    api_schema.metadata.create_all(api)
    urls = {
        "cell0": database_factory.url(db_backend, "rc0"),
        "c1": database_factory.url(db_backend, "rc1"),
    }
    cells.map_cell0(api, urls["cell0"])
    cell1 = cells.create_cell(
        api, name="cell1", transport_url="fake://", database_connection=urls["c1"]
    )
    engines = {cells.CELL0_UUID: make_engine(urls["cell0"]), cell1.uuid: make_engine(urls["c1"])}
    for engine in engines.values():
        cell_schema.metadata.create_all(engine)
    yield CellRouter(api, engines), cell1.uuid
    for engine in (api, *engines.values()):
        engine.dispose()


def add(router: CellRouter, cell_uuid: str, name: str, seconds: int, **values: Any) -> Instance:
    inst = Instance(
        uuid=str(uuidlib.uuid4()),
        project_id=values.pop("project_id", "p1"),
        user_id="u1",
        flavor=FLAVOR,
        display_name=name,
        vm_state="active",
        created_at=T0 + timedelta(seconds=seconds),
        **values,
    )
    with router.api_engine.begin() as conn:
        instance_mappings.create(
            conn, inst.uuid, inst.project_id, inst.user_id, cell_uuid=cell_uuid
        )
    with router.engine_for_cell(cell_uuid).begin() as conn:
        return repo.create(conn, inst)


def names(page: list[Instance]) -> list[str]:
    return [inst.display_name or "" for inst in page]


def test_routing(setup: tuple[CellRouter, str]) -> None:
    router, cell1 = setup
    inst = add(router, cell1, "a", 0)
    assert router.cell_of_instance(inst.uuid) == cell1
    assert router.engine_for_instance(inst.uuid) is router.cell_engines[cell1]
    assert router.get_instance(inst.uuid).display_name == "a"
    assert router.cell0_engine() is router.cell_engines[cells.CELL0_UUID]
    with pytest.raises(InstanceNotFound) as err:
        router.engine_for_instance("missing")
    assert err.value.message == "Instance missing could not be found."
    with router.api_engine.begin() as conn:
        instance_mappings.create(conn, "unscheduled", "p1", "u1")
        host_mappings.ensure(conn, "host1", cell1)
    with pytest.raises(InstanceNotFound):
        router.engine_for_instance("unscheduled")
    assert router.engine_for_host("host1") is router.cell_engines[cell1]
    with pytest.raises(HostMappingNotFound) as missing:
        router.engine_for_host("nohost")
    assert (missing.value.code, missing.value.message) == (
        400,
        "Host 'nohost' is not mapped to any cell",
    )


def test_list_merges_cells_with_limit_and_marker(setup: tuple[CellRouter, str]) -> None:
    router, cell1 = setup
    for i in range(7):
        add(router, cell1 if i % 2 else cells.CELL0_UUID, f"vm-{i}", i)
    f = listing.InstanceFilters()
    assert names(router.list_instances(f).instances) == [f"vm-{i}" for i in range(6, -1, -1)]
    first = router.list_instances(f, limit=3)
    assert names(first.instances) == ["vm-6", "vm-5", "vm-4"] and first.down_cells == ()
    second = router.list_instances(f, limit=3, marker=first.instances[-1].uuid)
    assert names(second.instances) == ["vm-3", "vm-2", "vm-1"]
    by_name = router.list_instances(f, sort_keys=["display_name"], sort_dirs=["asc"], limit=4)
    assert names(by_name.instances) == ["vm-0", "vm-1", "vm-2", "vm-3"]
    with pytest.raises(MarkerNotFound) as err:
        router.list_instances(f, marker="nope")
    assert (err.value.code, err.value.message) == (400, "marker [nope] not found")
    assert router.list_instances(f, limit=0).instances == []


def test_down_cell_is_reported(setup: tuple[CellRouter, str], tmp_path: Path) -> None:
    router, cell1 = setup
    add(router, cell1, "up", 0)
    broken = make_engine(f"sqlite:///{tmp_path}/no/such/dir/db.sqlite")
    router.cell_engines["broken-cell"] = broken
    page = router.list_instances(listing.InstanceFilters())
    assert names(page.instances) == ["up"]
    assert page.down_cells == ("broken-cell",)
    results = router.scatter(lambda conn: 1)
    assert isinstance(results["broken-cell"], CellDown)
    assert results[cell1] == 1
    project, user, down = router.count_usage("p1", "u1")
    assert project == {"instances": 1, "cores": 1, "ram": 512} == user
    assert down == ("broken-cell",)
    broken.dispose()


def test_count_usage_over_cells(setup: tuple[CellRouter, str]) -> None:
    router, cell1 = setup
    add(router, cell1, "a", 0)
    add(router, cells.CELL0_UUID, "b", 1)
    add(router, cell1, "c", 2, project_id="p2")
    project, user, down = router.count_usage("p1")
    assert project == {"instances": 2, "cores": 2, "ram": 1024}
    assert (user, down) == ({}, ())
