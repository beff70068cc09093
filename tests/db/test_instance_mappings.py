"""Instance and host mappings on SQLite, PostgreSQL and MariaDB: create unscheduled, set the
cell, queue for delete, look-ups and listing, host → cell."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import sqlalchemy as sa

from openkeel.db import cells
from openkeel.db.engine import make_engine
from openkeel.db.repositories import host_mappings, instance_mappings
from openkeel.db.schema import api as api_schema
from openkeel.domain.instances import HostMappingNotFound, InstanceMappingNotFound


@pytest.fixture
def api(db_url: str) -> Iterator[sa.Engine]:
    engine = make_engine(db_url)
    api_schema.metadata.create_all(engine)
    yield engine
    engine.dispose()


def test_instance_mapping_lifecycle(api: sa.Engine) -> None:
    cell = cells.create_cell(api, name="c1", transport_url="fake://", database_connection="x://")
    with api.begin() as conn:
        created = instance_mappings.create(conn, "i1", "p1", "u1")
        instance_mappings.create(conn, "i2", "p1", "u2", cell_uuid=cell.uuid)
        instance_mappings.create(conn, "i3", "p2", "u1")
    assert (created.cell_uuid, created.cell_id, created.queued_for_delete) == (None, None, False)
    with api.begin() as conn:
        moved = instance_mappings.set_cell(conn, "i1", cell.uuid)
        instance_mappings.set_queued_for_delete(conn, "i2")
    assert (moved.cell_uuid, moved.cell_id) == (cell.uuid, cell.id)
    with api.connect() as conn:
        assert instance_mappings.get(conn, "i2").queued_for_delete is True
        assert [m.instance_uuid for m in instance_mappings.list_by_project(conn, "p1")] == [
            "i1",
            "i2",
        ]
        live = instance_mappings.list_by_project(conn, "p1", include_queued_for_delete=False)
        assert [m.instance_uuid for m in live] == ["i1"]
        assert instance_mappings.count_live(conn, "p1", "u1") == 1
        assert sorted(instance_mappings.get_many(conn, ["i1", "i3", "zz"])) == ["i1", "i3"]
        with pytest.raises(InstanceMappingNotFound) as err:
            instance_mappings.get(conn, "zz")
    assert (err.value.code, err.value.message) == (404, "Instance zz has no mapping to a cell.")
    with api.begin() as conn:
        instance_mappings.delete(conn, "i3")
        with pytest.raises(InstanceMappingNotFound):
            instance_mappings.set_cell(conn, "i3", cell.uuid)
        with pytest.raises(InstanceMappingNotFound):
            instance_mappings.set_queued_for_delete(conn, "i3")


def test_host_mappings(api: sa.Engine) -> None:
    cell = cells.create_cell(api, name="c1", transport_url="fake://", database_connection="x://")
    with api.begin() as conn:
        first = host_mappings.ensure(conn, "h1", cell.uuid)
        again = host_mappings.ensure(conn, "h1", cell.uuid)
        host_mappings.ensure(conn, "h0", cell.uuid)
    assert first == again == host_mappings.HostMapping("h1", cell.id, cell.uuid)
    with api.begin() as conn:
        assert host_mappings.get(conn, "h1").cell_uuid == cell.uuid
        assert [m.host for m in host_mappings.list_all(conn, cell.uuid)] == ["h0", "h1"]
        host_mappings.delete(conn, "h1")
        with pytest.raises(HostMappingNotFound):
            host_mappings.get(conn, "h1")
