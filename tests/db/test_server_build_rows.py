"""The rows of a server build written in batches and without read-backs (``POST /servers``,
conductor, compute) on SQLite, PostgreSQL and MariaDB: they store what the one-row functions
store; quota limit layers and lock rows; instance action events recorded without read-back."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime

import pytest
import sqlalchemy as sa

from openkeel.db.engine import make_engine
from openkeel.db.repositories import (
    build_requests,
    instance_actions,
    instance_mappings,
    quotas,
    request_specs,
)
from openkeel.db.repositories.request_specs import RequestSpec
from openkeel.db.schema import api as api_schema
from openkeel.db.schema import cell as cell_schema
from openkeel.domain.errors import NotFound
from openkeel.domain.instances import FlavorSnapshot, Instance
from tests.db.backends import Backend, DatabaseFactory

FLAVOR = FlavorSnapshot(
    flavorid="42", name="m1.nano", memory_mb=128, vcpus=2, root_gb=1, extra_specs={"a": "b"}, id=3
)
T0 = datetime(2024, 1, 1, 0, 0, 1)


@pytest.fixture
def api(db_url: str) -> Iterator[sa.Engine]:
    engine = make_engine(db_url)
    api_schema.metadata.create_all(engine)
    yield engine
    engine.dispose()


@pytest.fixture
def cell(db_backend: Backend, database_factory: DatabaseFactory) -> Iterator[sa.Engine]:
    engine = make_engine(database_factory.url(db_backend, "cell"))
    cell_schema.metadata.create_all(engine)
    yield engine
    engine.dispose()


def instance(uuid: str, user_id: str = "u1") -> Instance:
    return Instance(
        uuid=uuid,
        project_id="p1",
        user_id=user_id,
        flavor=FLAVOR,
        display_name=f"srv-{uuid}",
        vm_state="building",
        task_state="scheduling",
        metadata={"m": "1"},
        system_metadata={"image_min_ram": "0"},
        tags=("t1",),
        security_groups=("default",),
        created_at=T0,
    )


def _stored(conn: sa.Connection, uuid: str) -> dict[str, object]:
    table = api_schema.build_requests
    row = conn.execute(sa.select(table).where(table.c.instance_uuid == uuid)).mappings().one()
    return {k: v for k, v in row.items() if k not in ("id", "instance_uuid")}


def test_batched_build_rows_match_the_one_row_functions(api: sa.Engine) -> None:
    bdms = [{"boot_index": 0, "source_type": "image"}]
    first, second = instance("b1"), instance("b2", user_id="u2")
    with api.begin() as conn:
        stored = build_requests.add(conn, [first, second], block_device_mappings=bdms, tags=["x"])
        build_requests.create(
            conn, replace(first, uuid="c1"), block_device_mappings=bdms, tags=["x"]
        )
        instance_mappings.add_unscheduled(conn, [("b1", "p1", "u1"), ("b2", "p1", "u2")])
        instance_mappings.create(conn, "c1", "p1", "u1")
        specs = [RequestSpec(instance_uuid=u, project_id="p1", user_id="u1", flavor=FLAVOR,
                             scheduler_hints={"group": ["g"]}, force_hosts=("h",))
                 for u in ("b1", "b2")]  # fmt: skip
        request_specs.add(conn, [s.to_primitive() for s in specs])
    with api.connect() as conn:
        assert stored == [json.loads(str(_stored(conn, u)["instance"])) for u in ("b1", "b2")]
        assert stored[0] == {**first.to_primitive(), "created_at": T0.isoformat()}
        copy = _stored(conn, "c1")
        assert _stored(conn, "b1") == {**copy, "instance": copy["instance"].replace("c1", "b1")}  # type: ignore[attr-defined]
        assert build_requests.get(conn, "b2").instance == second
        assert build_requests.get(conn, "b1").tags == ("x",)
        mapped = instance_mappings.get(conn, "b2")
        assert (mapped.project_id, mapped.user_id, mapped.cell_uuid) == ("p1", "u2", None)
        assert not mapped.queued_for_delete
        assert [request_specs.get(conn, s.instance_uuid) for s in specs] == specs


def test_move_to_cell(api: sa.Engine) -> None:
    cells = api_schema.cell_mappings
    with api.begin() as conn:
        conn.execute(sa.insert(cells).values(uuid="cell-1", name="cell1", transport_url="none:///",
                                             database_connection="sqlite://"))  # fmt: skip
        instance_mappings.add_unscheduled(conn, [("i1", "p1", "u1")])
        instance_mappings.move_to_cell(conn, "i1", "cell-1")
        with pytest.raises(NotFound):
            instance_mappings.move_to_cell(conn, "gone", "cell-1")
    with api.connect() as conn:
        assert instance_mappings.get(conn, "i1").cell_uuid == "cell-1"


def test_limit_layers_and_lock_rows(api: sa.Engine) -> None:
    with api.begin() as conn:
        quotas.set_class_limit(conn, "default", "instances", 5)
        quotas.set_class_limit(conn, "default", "cores", 7)
        quotas.set_class_limit(conn, "other", "cores", 1)
        quotas.set_project_limit(conn, "p1", "cores", 9)
        quotas.set_project_limit(conn, "p2", "cores", 3)
        quotas.set_user_limit(conn, "p1", "u1", "ram", 100)
        quotas.set_user_limit(conn, "p1", "u2", "ram", 200)
    with api.connect() as conn:
        assert quotas.limit_layers(conn, "default", "p1", "u1") == (
            {"instances": 5, "cores": 7},
            {"cores": 9},
            {"ram": 100},
        )
        assert quotas.limit_layers(conn, "default", "p1", None) == (
            {"instances": 5, "cores": 7},
            {"cores": 9},
            {},
        )
    key = ("p1", "", "instances")
    with api.begin() as conn:
        assert not quotas.lock(conn, key)
    quotas.ensure_lock_rows(api, [key])
    with api.begin() as conn:
        assert quotas.lock(conn, key)


def test_instance_counts_and_unscheduled_usage(api: sa.Engine, cell: sa.Engine) -> None:
    table = cell_schema.instances
    with cell.begin() as conn:
        for uuid, user, vcpus, state in (("a", "u1", 2, "active"), ("b", "u2", 4, "active"),
                                         ("c", "u1", 8, "soft-delete")):  # fmt: skip
            conn.execute(sa.insert(table).values(uuid=uuid, project_id="p1", user_id=user,
                                                 vcpus=vcpus, memory_mb=64, vm_state=state,
                                                 deleted=0))  # fmt: skip
    with cell.connect() as conn:
        counted = quotas.count_instances(conn, "p1", "u1")
        assert counted.project == {"instances": 2, "cores": 6, "ram": 128}
        assert counted.user == {"instances": 1, "cores": 2, "ram": 64}
        assert quotas.count_instances(conn, "p1", "u9").user == {"instances": 0, "cores": 0,
                                                                  "ram": 0}  # fmt: skip
        assert quotas.count_instances(conn, "p1", None).user == {}
    with api.begin() as conn:
        build_requests.add(conn, [instance("b1"), instance("b2", user_id="u2")])
        instance_mappings.add_unscheduled(conn, [("b1", "p1", "u1"), ("b2", "p1", "u2")])
    for _ in range(2):  # the second time from the parsed-usage cache
        with api.connect() as conn:
            pending = quotas.count_unscheduled(conn, "p1", "u2")
        assert pending.project == {"instances": 2, "cores": 4, "ram": 256}
        assert pending.user == {"instances": 1, "cores": 2, "ram": 128}


def test_events_recorded_without_read_back(cell: sa.Engine) -> None:
    actions = cell_schema.instance_actions
    with cell.begin() as conn:
        conn.execute(sa.insert(cell_schema.instances).values(uuid="i1", project_id="p", deleted=0))
        instance_actions.add_action(conn, "i1", "create", request_id="req-1", user_id="u",
                                    project_id="p", now=T0)  # fmt: skip
        assert instance_actions.action_exists(conn, "i1", "req-1")
        assert not instance_actions.action_exists(conn, "i1", "req-2")
        started = instance_actions.record_event_start(conn, "i1", "req-1", "build", host="h")
        finished = instance_actions.record_event_finish(
            conn, "i1", "req-1", "build", result="Error", traceback="tb", details="boom"
        )
        assert started == finished
        # A service context without the request id: the last action, not touched.
        instance_actions.record_event_start(conn, "i1", "req-x", "other", fallback_to_last=True)
        with pytest.raises(NotFound):
            instance_actions.record_event_start(conn, "i1", "req-x", "other")
        with pytest.raises(NotFound):
            instance_actions.record_event_finish(conn, "i1", "req-1", "never", result="Success")
    with cell.connect() as conn:
        action = instance_actions.get_action(conn, "i1", "req-1")
        assert action is not None and action.message == "Error"
        events = {e.event: e for e in instance_actions.list_events(conn, action.id)}
        build = events["build"]
        assert (build.result, build.traceback, build.details, build.host) == (
            "Error",
            "tb",
            "boom",
            "h",
        )
        assert build.finish_time is not None and events["other"].finish_time is None
        updated = conn.execute(sa.select(actions.c.updated_at)).scalar_one()
        assert updated == build.finish_time
