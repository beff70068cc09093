"""Cells v2 bootstrap against the API database: cell0, create/list/delete, simple setup."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import sqlalchemy as sa

from openkeel.db import cells
from openkeel.db.engine import make_engine
from openkeel.db.schema import api as api_schema
from openkeel.db.schema import cell as cell_schema
from tests.db.backends import Backend, DatabaseFactory

RABBIT = "rabbit://guest:guest@127.0.0.1:5672/"


@dataclass
class Deployment:
    api: sa.Engine
    cell_url: str
    cell0_url: str


def minimal_cell_db(url: str) -> None:
    """The cell tables cells.py reads, without running the whole migration."""
    engine = make_engine(url)
    tables = [cell_schema.instances, cell_schema.compute_nodes]
    cell_schema.metadata.create_all(engine, tables=tables)
    engine.dispose()


@pytest.fixture
def deployment(
    db_url: str, db_backend: Backend, database_factory: DatabaseFactory
) -> Iterator[Deployment]:
    """A migrated API database and an (empty) cell database, on each backend."""
    cells.sync_api_db(db_url)
    cell_url = database_factory.url(db_backend, "cell1")
    minimal_cell_db(cell_url)
    api = make_engine(db_url)
    yield Deployment(api, cell_url, database_factory.url(db_backend, "cell1_cell0"))
    api.dispose()


@pytest.fixture
def sqlite_deployment(tmp_path: Path) -> Iterator[Deployment]:
    """The same on SQLite only, for behaviour that does not depend on the backend."""
    api_url = f"sqlite:///{tmp_path / 'nova_api.sqlite'}"
    cells.sync_api_db(api_url)
    cell_url = f"sqlite:///{tmp_path / 'nova.sqlite'}"
    minimal_cell_db(cell_url)
    api = make_engine(api_url)
    yield Deployment(api, cell_url, f"sqlite:///{tmp_path / 'nova_cell0.sqlite'}")
    api.dispose()


@pytest.mark.parametrize(
    ("main", "cell0"),
    [
        ("mysql+pymysql://nova:p%40ss@db/nova?charset=utf8", "mysql+pymysql://nova:p%40ss@db/nova_cell0?charset=utf8"),
        ("postgresql://nova@db:5432/nova", "postgresql://nova@db:5432/nova_cell0"),
        ("sqlite:////var/lib/nova/nova.sqlite", "sqlite:////var/lib/nova/nova_cell0.sqlite"),
        ("sqlite:///nova.db", "sqlite:///nova_cell0.db"),
    ],
)  # fmt: skip
def test_default_cell0_url_appends_cell0_to_the_database_name(main: str, cell0: str) -> None:
    assert cells.default_cell0_url(main) == cell0


def test_map_cell0_twice_keeps_the_first_mapping(deployment: Deployment) -> None:
    first = cells.map_cell0(deployment.api, deployment.cell0_url)
    assert first.uuid == cells.CELL0_UUID and first.is_cell0
    assert (first.name, first.transport_url) == ("cell0", "none:///")
    with pytest.raises(cells.CellMappingExists):
        cells.map_cell0(deployment.api, "sqlite:////elsewhere.sqlite")
    assert cells.list_cells(deployment.api) == [first]


def test_create_cell_rejects_a_database_or_transport_already_used(deployment: Deployment) -> None:
    cells.map_cell0(deployment.api, deployment.cell0_url)
    cell1 = cells.create_cell(
        deployment.api, name="cell1", transport_url=RABBIT, database_connection=deployment.cell_url
    )
    with pytest.raises(cells.DuplicateCellConnection) as same_db:
        cells.create_cell(
            deployment.api,
            name="x",
            transport_url="rabbit://other/",
            database_connection=deployment.cell_url,
        )
    with pytest.raises(cells.DuplicateCellConnection) as same_mq:
        cells.create_cell(
            deployment.api, name="x", transport_url=RABBIT, database_connection="sqlite:////other"
        )
    assert same_db.value.existing_uuid == same_mq.value.existing_uuid == cell1.uuid
    assert [c.name for c in cells.list_cells(deployment.api)] == ["cell0", "cell1"]


def test_create_cell_can_create_a_disabled_cell(sqlite_deployment: Deployment) -> None:
    cell = cells.create_cell(
        sqlite_deployment.api, name=None, transport_url=RABBIT,
        database_connection=sqlite_deployment.cell_url, disabled=True,
    )  # fmt: skip
    assert cells.get_cell(sqlite_deployment.api, cell.uuid) == cell
    assert cell.disabled and cell.name is None


def test_delete_cell_refuses_unknown_cells(sqlite_deployment: Deployment) -> None:
    with pytest.raises(cells.CellMappingNotFound):
        cells.delete_cell(sqlite_deployment.api, "nope")


def _cell_with_host_and_instance(deployment: Deployment, *, deleted: bool) -> cells.CellMapping:
    cell = cells.create_cell(
        deployment.api, name="c", transport_url=RABBIT, database_connection=deployment.cell_url
    )
    cells.map_hosts(deployment.api, cell, ["compute1"])
    engine = make_engine(deployment.cell_url)
    with engine.begin() as connection:
        connection.execute(
            cell_schema.instances.insert().values(uuid="i-1", project_id="p", deleted=int(deleted))
        )
        connection.execute(cell_schema.compute_nodes.insert().values(**_node("compute1"), mapped=1))
    engine.dispose()
    assert cells.map_instances(deployment.api, cell) == 1
    return cell


def test_delete_cell_refuses_cells_with_hosts_or_live_instances(
    sqlite_deployment: Deployment,
) -> None:
    cell = _cell_with_host_and_instance(sqlite_deployment, deleted=False)
    with pytest.raises(cells.CellHasHosts):
        cells.delete_cell(sqlite_deployment.api, cell.uuid)
    with pytest.raises(cells.CellHasInstances):
        cells.delete_cell(sqlite_deployment.api, cell.uuid, force=True)


def test_delete_cell_with_force_removes_mappings_of_deleted_instances(
    sqlite_deployment: Deployment,
) -> None:
    cell = _cell_with_host_and_instance(sqlite_deployment, deleted=True)
    with sqlite_deployment.api.begin() as connection:
        connection.execute(sa.delete(api_schema.host_mappings))
    with pytest.raises(cells.CellHasInstanceMappings):
        cells.delete_cell(sqlite_deployment.api, cell.uuid)
    cells.map_hosts(sqlite_deployment.api, cell, ["compute1"])
    cells.delete_cell(sqlite_deployment.api, cell.uuid, force=True)
    assert cells.list_cells(sqlite_deployment.api) == []
    engine = make_engine(sqlite_deployment.cell_url)
    with engine.connect() as connection:
        assert connection.execute(sa.select(cell_schema.compute_nodes.c.mapped)).scalar() == 0
    engine.dispose()


def _node(host: str) -> dict[str, object]:
    return {
        "host": host, "hypervisor_hostname": host, "vcpus": 1, "memory_mb": 1, "local_gb": 1,
        "vcpus_used": 0, "memory_mb_used": 0, "local_gb_used": 0, "hypervisor_type": "kubevirt",
        "hypervisor_version": 1, "cpu_info": "{}",
    }  # fmt: skip


def test_simple_cell_setup_without_compute_hosts_maps_only_cell0(
    sqlite_deployment: Deployment,
) -> None:
    result = cells.simple_cell_setup(sqlite_deployment.api, sqlite_deployment.cell_url, RABBIT)
    assert result.cell is None and result.cell0_sync_error is None and not result.cell0_existed
    assert result.cell0.database_connection == sqlite_deployment.cell0_url
    assert [c.uuid for c in cells.list_cells(sqlite_deployment.api)] == [cells.CELL0_UUID]


def test_simple_cell_setup_maps_the_cell_its_hosts_and_instances(
    sqlite_deployment: Deployment,
) -> None:
    engine = make_engine(sqlite_deployment.cell_url)
    with engine.begin() as connection:
        connection.execute(cell_schema.compute_nodes.insert().values(**_node("compute1")))
        connection.execute(cell_schema.instances.insert().values(uuid="i-1", project_id="p"))
    engine.dispose()
    api = sqlite_deployment.api
    first = cells.simple_cell_setup(api, sqlite_deployment.cell_url, RABBIT)
    assert first.cell is not None and not first.hosts_already_mapped
    assert first.instances_mapped == 1
    assert cells.host_cell_uuid(api, "compute1") == first.cell.uuid
    again = cells.simple_cell_setup(api, sqlite_deployment.cell_url, RABBIT)
    assert again.cell0_existed and again.hosts_already_mapped
    assert again.cell == first.cell and again.instances_mapped == 0


def test_discover_hosts_maps_new_compute_nodes_once(sqlite_deployment: Deployment) -> None:
    api = sqlite_deployment.api
    cell = cells.ensure_cell(
        api, name="cell1", transport_url=RABBIT, database_connection=sqlite_deployment.cell_url
    )
    assert (
        cells.ensure_cell(
            api, name="cell1", transport_url=RABBIT, database_connection=sqlite_deployment.cell_url
        )
        == cell
    )
    engine = make_engine(sqlite_deployment.cell_url)
    with engine.begin() as connection:
        connection.execute(cell_schema.compute_nodes.insert().values(**_node("compute1")))
    engine.dispose()
    assert cells.discover_hosts(api, cell) == ["compute1"]
    assert cells.discover_hosts(api, cell) == []
