"""The quota repository and the engine's claim on every database backend."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
import sqlalchemy as sa

from openkeel.api.services import ApiServices
from openkeel.api.usecases.quotas import QuotaEngine
from openkeel.conf import make_config
from openkeel.db.engine import make_engine
from openkeel.db.repositories import quotas as repo
from openkeel.db.schema import api as api_tables
from openkeel.db.schema import cell as cell_tables
from openkeel.domain.quotas import QuotaExceeded
from tests.db.backends import Backend, DatabaseFactory


@pytest.fixture
def api_db(db_url: str) -> Iterator[sa.Engine]:
    engine = make_engine(db_url)
    api_tables.metadata.create_all(engine)
    yield engine
    engine.dispose()


def test_limits_upsert_and_delete(api_db: sa.Engine) -> None:
    with api_db.begin() as conn:
        repo.set_project_limit(conn, "p1", "cores", 5)
        repo.set_project_limit(conn, "p1", "cores", 6)
        repo.set_user_limit(conn, "p1", "u1", "cores", 2)
        repo.set_user_limit(conn, "p1", "u2", "cores", 3)
        repo.set_user_limit(conn, "p1", "u2", "cores", 4)
        repo.set_class_limit(conn, "default", "ram", 7)
        repo.set_class_limit(conn, "default", "ram", 8)
    with api_db.connect() as conn:
        assert repo.project_limits(conn, "p1") == {"cores": 6}
        assert repo.user_limits(conn, "p1", "u2") == {"cores": 4}
        assert repo.user_limit_totals(conn, "p1") == {"cores": 6}
        assert repo.class_limits(conn, "default") == {"ram": 8}
    with api_db.begin() as conn:
        repo.delete_user_limits(conn, "p1", "u1")
    with api_db.connect() as conn:
        assert repo.user_limit_totals(conn, "p1") == {"cores": 4}
    with api_db.begin() as conn:
        repo.delete_project_limits(conn, "p1")
    with api_db.connect() as conn:
        assert repo.project_limits(conn, "p1") == {}
        assert repo.user_limits(conn, "p1", "u2") == {}


def test_api_db_counts(api_db: sa.Engine) -> None:
    with api_db.begin() as conn:
        for name, user in (("k1", "u1"), ("k2", "u1"), ("k3", "u2")):
            conn.execute(sa.insert(api_tables.key_pairs).values(name=name, user_id=user))
        key = conn.execute(
            sa.insert(api_tables.instance_groups).values(uuid="g1", project_id="p1", user_id="u1")
        ).inserted_primary_key
        assert key is not None
        group_id = key[0]
        conn.execute(
            sa.insert(api_tables.instance_groups).values(uuid="g2", project_id="p1", user_id="u2")
        )
        for uuid, user, gone in (("i1", "u1", False), ("i2", "u1", True), ("i3", "u2", False)):
            conn.execute(
                sa.insert(api_tables.instance_mappings).values(
                    instance_uuid=uuid, project_id="p1", user_id=user, queued_for_delete=gone
                )
            )
            conn.execute(
                sa.insert(api_tables.instance_group_member).values(
                    instance_uuid=uuid, group_id=group_id
                )
            )
    with api_db.connect() as conn:
        assert repo.count_key_pairs(conn, "u1") == 2
        groups = repo.count_server_groups(conn, "p1", "u1")
        assert groups.project == {"server_groups": 2} and groups.user == {"server_groups": 1}
        assert repo.count_group_members(conn, "g1", "u1") == 1


def test_instance_counts(db_backend: Backend, database_factory: DatabaseFactory) -> None:
    engine = make_engine(database_factory.url(db_backend, "cell"))
    cell_tables.metadata.create_all(engine)
    base = {"project_id": "p1", "user_id": "u1", "vm_state": "active", "deleted": 0,
            "hidden": False}  # fmt: skip
    rows = [
        {**base, "uuid": "a", "vcpus": 2, "memory_mb": 512},
        {**base, "uuid": "b", "user_id": "u2", "vcpus": 1, "memory_mb": 256},
        {**base, "uuid": "c", "vcpus": 4, "memory_mb": 1, "vm_state": "soft-delete"},
        {**base, "uuid": "d", "vcpus": 8, "memory_mb": 1, "deleted": 9},
        {**base, "uuid": "e", "vcpus": 8, "memory_mb": 1, "hidden": True},
    ]
    try:
        with engine.begin() as conn:
            conn.execute(sa.insert(cell_tables.instances), rows)
        with engine.connect() as conn:
            counted = repo.count_instances(conn, "p1", "u1")
    finally:
        engine.dispose()
    assert counted.project == {"instances": 2, "cores": 3, "ram": 768}
    assert counted.user == {"instances": 1, "cores": 2, "ram": 512}


def test_lock_rows_are_idempotent(api_db: sa.Engine) -> None:
    key = ("p1", "", "instances")
    repo.ensure_lock_rows(api_db, [key])
    repo.ensure_lock_rows(api_db, [key])
    with api_db.begin() as conn:
        repo.lock(conn, key)
        count = conn.execute(sa.select(sa.func.count()).select_from(api_tables.quota_usages))
        assert count.scalar_one() == 1


def test_claim_race_for_the_last_server_group(api_db: sa.Engine, db_url: str) -> None:
    conf = make_config(overrides={"api_database.connection": db_url})
    services = ApiServices(conf=conf, api_db=api_db)
    QuotaEngine(services).set_limits("p1", None, {"server_groups": 1})
    barrier = threading.Barrier(2)
    outcomes: list[str] = []

    def take(uuid: str) -> None:
        barrier.wait()
        try:
            with QuotaEngine(services).claim("p1", "u1", {"server_groups": 1}) as conn:
                conn.execute(
                    sa.insert(api_tables.instance_groups).values(
                        uuid=uuid, project_id="p1", user_id="u1"
                    )
                )
            outcomes.append("won")
        except QuotaExceeded:
            outcomes.append("over")

    threads = [threading.Thread(target=take, args=(f"g{i}",)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(outcomes) == ["over", "won"]
    with api_db.connect() as conn:
        assert repo.count_server_groups(conn, "p1", None).project == {"server_groups": 1}
