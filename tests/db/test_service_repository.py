"""Service and compute node repositories on SQLite, PostgreSQL and MariaDB: create, lookup,
update, soft delete with the host's nodes, LIKE search, paging and statistics."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import sqlalchemy as sa

from openkeel.db.engine import make_engine
from openkeel.db.repositories import compute_nodes as nodes
from openkeel.db.repositories import services as repo
from openkeel.db.schema import api as api_schema
from openkeel.db.schema import cell as cell_schema
from tests.db.backends import Backend, DatabaseFactory


@pytest.fixture
def engine(db_url: str) -> Iterator[sa.Engine]:
    engine = make_engine(db_url)
    cell_schema.metadata.create_all(engine)
    yield engine
    engine.dispose()


@pytest.fixture
def api_engine(db_backend: Backend, database_factory: DatabaseFactory) -> Iterator[sa.Engine]:
    engine = make_engine(database_factory.url(db_backend))
    api_schema.metadata.create_all(engine)
    yield engine
    engine.dispose()


def test_create_lookup_update(engine: sa.Engine) -> None:
    with engine.begin() as conn:
        svc = repo.create_service(conn, "host1", "nova-compute")
        repo.create_service(conn, "host1", "nova-scheduler")
    with engine.begin() as conn:
        assert (svc.topic, svc.disabled, svc.forced_down) == ("compute", False, False)
        assert repo.get_service_by_uuid(conn, svc.uuid or "") == svc
        assert repo.get_by_host_and_binary(conn, "host1", "nova-compute") == svc
        assert [s.binary for s in repo.list_services(conn, host="host1")] == [
            "nova-compute",
            "nova-scheduler",
        ]
        repo.update_service(conn, svc.id, disabled=True, disabled_reason="maint")
        fresh = repo.get_service(conn, svc.id)
    assert fresh is not None
    assert (fresh.disabled, fresh.disabled_reason) == (True, "maint")
    assert fresh.updated_at is not None


def test_destroy_soft_deletes_service_and_nodes(engine: sa.Engine) -> None:
    with engine.begin() as conn:
        svc = repo.create_service(conn, "host1", "nova-compute")
        node = nodes.create_compute_node(conn, "host1", "node1", service_id=svc.id)
        repo.destroy_service(conn, svc)
        assert repo.get_service(conn, svc.id) is None
        assert nodes.get_node(conn, node.id) is None
        row = conn.execute(sa.select(cell_schema.compute_nodes)).one()
        assert (row.deleted, row.mapped) == (row.id, 0)
        # the unique (host, binary, deleted) key lets the host register again
        again = repo.create_service(conn, "host1", "nova-compute")
    assert again.id != svc.id


def test_nodes_search_paging_and_statistics(engine: sa.Engine) -> None:
    with engine.begin() as conn:
        for i, disabled in enumerate((False, False, True)):
            svc = repo.create_service(conn, f"h{i}", "nova-compute", disabled=disabled)
            nodes.create_compute_node(
                conn, f"h{i}", f"node-{i}.example", service_id=svc.id, vcpus=4, memory_mb=1024
            )
    with engine.connect() as conn:
        listed = nodes.list_nodes(conn)
        assert [n.hypervisor_hostname for n in nodes.search_nodes(conn, "-1.")] == [
            "node-1.example"
        ]
        assert nodes.list_nodes(conn, limit=1, after_id=listed[0].id) == [listed[1]]
        stats = nodes.statistics(conn)
    assert (stats["count"], stats["vcpus"], stats["memory_mb"], stats["running_vms"]) == (
        2,
        8,
        2048,
        0,
    )


def test_host_mapping_round_trip(api_engine: sa.Engine) -> None:
    with api_engine.begin() as conn:
        conn.execute(sa.insert(api_schema.cell_mappings).values(uuid="c1", name="cell1"))
        repo.map_host(conn, "c1", "host1")
        assert repo.host_cell(conn, "host1") == "c1"
        repo.unmap_host(conn, "host1")
        assert repo.host_cell(conn, "host1") is None


def test_servers_and_migrations_on_host(engine: sa.Engine) -> None:
    with engine.begin() as conn:
        conn.execute(sa.insert(cell_schema.instances).values(uuid="i1", host="h1", deleted=0))
        conn.execute(
            sa.insert(cell_schema.migrations).values(
                source_compute="h1", source_node="n1", status="migrating", deleted=0
            )
        )
    with engine.connect() as conn:
        assert [s.uuid for s in nodes.servers_on_host(conn, "h1")] == ["i1"]
        assert nodes.count_servers_on_host(conn, "h2") == 0
        assert repo.migrations_in_progress(conn, "h1", "n1") == 1
        assert repo.done_evacuations_from(conn, "h1") == 0
