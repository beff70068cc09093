"""Instance repository on SQLite, PostgreSQL and MariaDB: create/get round trip, compare-and-swap
update (and a two-thread race), soft delete, metadata and tags, Nova's list filters, sorting and
paging, quota counts, and a statement count for a page of 100 instances."""

from __future__ import annotations

import threading
import uuid as uuidlib
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import pytest
import sqlalchemy as sa

from openkeel.db.engine import make_engine
from openkeel.db.repositories import instance_actions as actions
from openkeel.db.repositories import instance_faults as faults
from openkeel.db.repositories import instance_list as listing
from openkeel.db.repositories import instance_metadata as meta
from openkeel.db.repositories import instance_rows
from openkeel.db.repositories import instances as repo
from openkeel.db.schema import cell as cell_schema
from openkeel.domain.errors import Invalid
from openkeel.domain.instances import (
    FlavorSnapshot,
    Instance,
    InstanceActionNotFound,
    InstanceNotFound,
    InstanceTagNotFound,
    InstanceUpdate,
    InstanceUpdateConflict,
    UnexpectedDeletingTaskStateError,
    UnexpectedTaskStateError,
)
from openkeel.domain.states import states_from_statuses

FLAVOR = FlavorSnapshot(
    flavorid="1",
    name="m1.tiny",
    memory_mb=512,
    vcpus=1,
    root_gb=1,
    extra_specs={"hw:cpu_policy": "shared"},
    id=7,
)
BIG = FlavorSnapshot(flavorid="2", name="m1.small", memory_mb=2048, vcpus=2, root_gb=20, id=8)
T0 = datetime(2024, 1, 1, 12, 0, 0)
NETWORK_INFO = (
    {
        "id": "port-1",
        "address": "fa:16:3e:00:00:01",
        "network": {
            "id": "net-1",
            "label": "private",
            "subnets": [
                {
                    "cidr": "10.0.0.0/24",
                    "ips": [{"address": "10.0.0.5", "type": "fixed", "version": 4}],
                },
                {
                    "cidr": "fd00::/64",
                    "ips": [{"address": "fd00::5", "type": "fixed", "version": 6}],
                },
            ],
        },
    },
)


@pytest.fixture
def engine(db_url: str) -> Iterator[sa.Engine]:
    engine = make_engine(db_url)
    cell_schema.metadata.create_all(engine)
    yield engine
    engine.dispose()


def make(**values: Any) -> Instance:
    base: dict[str, Any] = {
        "uuid": str(uuidlib.uuid4()),
        "project_id": "p1",
        "user_id": "u1",
        "flavor": FLAVOR,
        "display_name": "vm",
        "vm_state": "building",
        "task_state": "scheduling",
        "power_state": 0,
        "created_at": T0,
    }
    base.update(values)
    return Instance(**base)


def create(engine: sa.Engine, **values: Any) -> Instance:
    with engine.begin() as conn:
        return repo.create(conn, make(**values))


def test_create_get_round_trip(engine: sa.Engine) -> None:
    wanted = make(
        metadata={"k": "v", "a": "b"},
        system_metadata={"image_min_ram": "0"},
        tags=("blue", "alpha"),
        security_groups=("default", "web"),
        network_info=NETWORK_INFO,
        trusted_certs=("cert-a", "cert-b"),
        key_name="key1",
        user_data="IyEvYmluL3NoCg==",
        locked=True,
        locked_by="owner",
        access_ip_v4="192.0.2.1",
        old_flavor=BIG,
    )
    with engine.begin() as conn:
        created = repo.create(conn, wanted)
    with engine.connect() as conn:
        got = repo.get(conn, wanted.uuid)
    assert got == created
    assert got.id is not None and got.id > 0
    assert got.flavor == FLAVOR and got.old_flavor == BIG and got.new_flavor is None
    assert dict(got.metadata) == {"k": "v", "a": "b"}
    assert dict(got.system_metadata) == {"image_min_ram": "0"}
    assert got.tags == ("alpha", "blue")
    assert got.security_groups == ("default", "web")
    assert got.network_info == NETWORK_INFO
    assert got.trusted_certs == ("cert-a", "cert-b")
    assert (got.locked, got.locked_by, got.access_ip_v4) == (True, "owner", "192.0.2.1")
    assert got.created_at == T0 and got.deleted is False and got.fault is None


def test_primitive_round_trip() -> None:
    inst = make(metadata={"a": "1"}, tags=("t",), network_info=NETWORK_INFO, new_flavor=BIG)
    assert Instance.from_primitive(inst.to_primitive()) == inst
    assert inst.to_primitive()["created_at"] == "2024-01-01T12:00:00"
    assert inst.to_primitive()["flavor"]["extra_specs"] == {"hw:cpu_policy": "shared"}


def test_get_missing_and_read_deleted(engine: sa.Engine) -> None:
    inst = create(engine, metadata={"k": "v"}, tags=("x",))
    with engine.begin() as conn:
        with pytest.raises(InstanceNotFound) as err:
            repo.get(conn, "nope")
        assert err.value.message == "Instance nope could not be found."
        deleted = repo.soft_delete(conn, inst.uuid)
    assert deleted.deleted is True and deleted.deleted_at is not None
    assert dict(deleted.metadata) == {"k": "v"}  # deleted together with the instance
    assert deleted.tags == ()
    with engine.connect() as conn:
        with pytest.raises(InstanceNotFound):
            repo.get(conn, inst.uuid)
        assert repo.get(conn, inst.uuid, read_deleted="only").uuid == inst.uuid
        row = conn.execute(
            sa.select(cell_schema.instances.c.deleted, cell_schema.instances.c.id)
        ).one()
        assert row.deleted == row.id
        with pytest.raises(InstanceNotFound):
            repo.soft_delete(conn, inst.uuid)


def test_update_with_expected_task_state(engine: sa.Engine) -> None:
    inst = create(engine)
    with engine.begin() as conn:
        updated = repo.update(
            conn,
            inst.uuid,
            InstanceUpdate(task_state="spawning", host="h1", node="n1", metadata={"m": "1"}),
            expected_task_state="scheduling",
        )
    assert (updated.task_state, updated.host, updated.node) == ("spawning", "h1", "n1")
    assert dict(updated.metadata) == {"m": "1"} and updated.updated_at is not None
    with engine.begin() as conn, pytest.raises(UnexpectedTaskStateError) as err:
        repo.update(
            conn,
            inst.uuid,
            InstanceUpdate(task_state=None),
            expected_task_state=["scheduling", None],
        )
    assert err.value.code == 409
    assert err.value.message == (
        f"Conflict updating instance {inst.uuid}. Expected: {{'task_state': ['scheduling', None]}}."
        " Actual: {'task_state': 'spawning'}"
    )


def test_update_vm_state_conflict_and_deleting(engine: sa.Engine) -> None:
    inst = create(engine, task_state="deleting")
    with engine.begin() as conn, pytest.raises(UnexpectedDeletingTaskStateError):
        repo.update(conn, inst.uuid, InstanceUpdate(task_state=None), expected_task_state=None)
    with engine.begin() as conn, pytest.raises(InstanceUpdateConflict) as err:
        repo.update(conn, inst.uuid, InstanceUpdate(progress=5), expected_vm_state="active")
    assert not isinstance(err.value, UnexpectedTaskStateError)
    assert err.value.message.endswith(
        "Expected: {'vm_state': ['active']}. Actual: {'vm_state': 'building'}"
    )
    with engine.begin() as conn, pytest.raises(InstanceNotFound):
        repo.update(conn, "missing", InstanceUpdate(progress=5))


def test_update_flavor_and_related(engine: sa.Engine) -> None:
    inst = create(engine, system_metadata={"a": "1", "b": "2"})
    changes = InstanceUpdate(
        flavor=BIG,
        old_flavor=FLAVOR,
        system_metadata={"b": "3", "c": "4"},
        network_info=NETWORK_INFO,
    )
    with engine.begin() as conn:
        updated = repo.update(conn, inst.uuid, changes)
        usage = repo.count_usage(conn, "p1", "u1")
    assert (updated.flavor, updated.old_flavor) == (BIG, FLAVOR)
    assert dict(updated.system_metadata) == {"b": "3", "c": "4"}
    assert updated.network_info == NETWORK_INFO
    assert usage.project == {"instances": 1, "cores": 2, "ram": 2048}


def test_compare_and_swap_race_has_one_winner(engine: sa.Engine) -> None:
    inst = create(engine)
    barrier = threading.Barrier(2)
    outcomes: list[str] = []

    def worker(host: str) -> None:
        barrier.wait()
        try:
            with engine.begin() as conn:
                repo.update(
                    conn,
                    inst.uuid,
                    InstanceUpdate(task_state="spawning", host=host),
                    expected_task_state="scheduling",
                )
            outcomes.append("won:" + host)
        except UnexpectedTaskStateError:
            outcomes.append("lost")

    threads = [threading.Thread(target=worker, args=(h,)) for h in ("h1", "h2")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(o.split(":")[0] for o in outcomes) == ["lost", "won"]
    winner = next(o for o in outcomes if o.startswith("won")).split(":")[1]
    with engine.connect() as conn:
        assert repo.get(conn, inst.uuid).host == winner


def test_metadata_and_tags(engine: sa.Engine) -> None:
    inst = create(engine, metadata={"a": "1"})
    with engine.begin() as conn:
        assert meta.update_metadata(conn, inst.uuid, {"b": "2"}, replace=False) == {
            "a": "1",
            "b": "2",
        }
        assert meta.update_metadata(conn, inst.uuid, {"c": "3"}, replace=True) == {"c": "3"}
        assert meta.delete_metadata_key(conn, inst.uuid, "c") is True
        assert meta.delete_metadata_key(conn, inst.uuid, "c") is False
        assert meta.get_metadata(conn, inst.uuid) == {}
        assert meta.set_tags(conn, inst.uuid, ["z", "y", "z"]) == ["y", "z"]
        assert meta.add_tag(conn, inst.uuid, "a") is True
        assert meta.add_tag(conn, inst.uuid, "a") is False
        meta.delete_tag(conn, inst.uuid, "z")
        assert meta.get_tags(conn, inst.uuid) == ["a", "y"]
        with pytest.raises(InstanceTagNotFound) as err:
            meta.delete_tag(conn, inst.uuid, "nope")
        assert err.value.message == f"Instance {inst.uuid} has no tag 'nope'"
        with pytest.raises(InstanceNotFound):
            meta.get_tags(conn, "missing")


def _names(engine: sa.Engine, filters: listing.InstanceFilters, **kw: Any) -> list[str]:
    with engine.connect() as conn:
        found = listing.list_instances(conn, filters, **kw)
    return [inst.display_name or "" for inst in found]


def test_list_filters(engine: sa.Engine) -> None:
    create(
        engine,
        display_name="web-1",
        tags=("a", "b"),
        host="h1",
        vm_state="active",
        task_state=None,
        created_at=T0,
        network_info=NETWORK_INFO,
        locked=True,
    )
    create(
        engine,
        display_name="web-2",
        tags=("a",),
        host="h2",
        vm_state="active",
        task_state="deleting",
        created_at=T0 + timedelta(seconds=1),
    )
    create(
        engine,
        display_name="db-1",
        project_id="p2",
        vm_state="error",
        task_state=None,
        created_at=T0 + timedelta(seconds=2),
        flavor=BIG,
    )
    create(
        engine,
        display_name="gone",
        vm_state="soft-delete",
        task_state=None,
        created_at=T0 + timedelta(seconds=3),
    )
    create(engine, display_name="hidden", hidden=True, created_at=T0 + timedelta(seconds=4))
    f = listing.InstanceFilters
    assert _names(engine, f()) == ["db-1", "web-2", "web-1"]
    assert _names(engine, f(project_id="p1")) == ["web-2", "web-1"]
    assert _names(engine, f(name="^web")) == ["web-2", "web-1"]
    assert _names(engine, f(status=states_from_statuses(["ACTIVE"]))) == ["web-2", "web-1"]
    assert _names(engine, f(status=states_from_statuses(["ERROR"]))) == ["db-1"]
    assert _names(engine, f(host="h1")) == ["web-1"]
    assert _names(engine, f(flavor_id=8)) == ["db-1"]
    assert _names(engine, f(tags=["a", "b"])) == ["web-1"]
    assert _names(engine, f(tags_any=["b", "zz"])) == ["web-1"]
    assert _names(engine, f(not_tags=["a", "b"])) == ["db-1", "web-2"]
    assert _names(engine, f(not_tags_any=["a"])) == ["db-1"]
    assert _names(engine, f(ip="10.0.0")) == ["web-1"]
    assert _names(engine, f(ip6="fd00::5")) == ["web-1"]
    assert _names(engine, f(ip="11.")) == []
    assert _names(engine, f(locked=True)) == ["web-1"]
    assert _names(engine, f(soft_deleted=True)) == ["gone", "db-1", "web-2", "web-1"]
    assert _names(engine, f(deleted=True)) == ["gone"]
    assert _names(engine, f(hidden=True)) == ["hidden"]
    assert _names(engine, f(deleted=None)) == ["gone", "db-1", "web-2", "web-1"]


def test_list_sort_and_paging(engine: sa.Engine) -> None:
    made = [
        create(engine, display_name=f"vm-{i}", created_at=T0 + timedelta(seconds=i % 3))
        for i in range(7)
    ]
    f = listing.InstanceFilters()
    keys, dirs = listing.normalize_sort(["display_name"], ["asc"])
    assert keys == ["display_name", "created_at", "id", "uuid"]
    assert _names(engine, f, sort_keys=["display_name"], sort_dirs=["asc"], limit=3) == [
        "vm-0",
        "vm-1",
        "vm-2",
    ]
    marker = made[2]
    with engine.connect() as conn:
        marker = repo.get(conn, marker.uuid)
    values = listing.sort_values(marker, keys)
    assert _names(engine, f, sort_keys=keys, sort_dirs=dirs, limit=3, marker_values=values) == [
        "vm-3",
        "vm-4",
        "vm-5",
    ]
    # Default order: created_at desc, id desc; walk all pages of 2 and get everything once.
    seen: list[str] = []
    values_ = None
    keys, dirs = listing.normalize_sort(None, None)
    while True:
        with engine.connect() as conn:
            page = listing.list_instances(conn, f, limit=2, marker_values=values_)
        if not page:
            break
        seen += [inst.display_name or "" for inst in page]
        values_ = listing.sort_values(page[-1], keys)
    assert seen == ["vm-5", "vm-2", "vm-4", "vm-1", "vm-6", "vm-3", "vm-0"]
    assert sorted(seen) == sorted(inst.display_name or "" for inst in made)


def test_page_of_100_uses_a_fixed_number_of_statements(engine: sa.Engine) -> None:
    rows = [
        make(display_name=f"vm-{i}", metadata={"k": str(i)}, tags=(f"t{i}",)) for i in range(100)
    ]
    with engine.begin() as conn:
        for inst in rows:
            repo.create(conn, inst)
    statements: list[str] = []

    def count(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        statements.append(statement)

    sa.event.listen(engine, "before_cursor_execute", count)
    try:
        with engine.connect() as conn:
            page = listing.list_instances(conn, listing.InstanceFilters(), limit=100)
    finally:
        sa.event.remove(engine, "before_cursor_execute", count)
    assert len(page) == 100
    assert all(dict(inst.metadata) == {"k": inst.display_name[3:]} for inst in page)  # type: ignore[index]
    assert all(inst.tags == (f"t{inst.display_name[3:]}",) for inst in page)  # type: ignore[index]
    selects = [s for s in statements if s.lstrip().upper().startswith("SELECT")]
    assert len(selects) == 3, selects  # the rows, every relation in one UNION ALL, the faults
    statements.clear()
    sa.event.listen(engine, "before_cursor_execute", count)
    try:
        with engine.connect() as conn:
            light = listing.list_instances(
                conn, listing.InstanceFilters(), limit=100, relations=frozenset({"metadata"})
            )
    finally:
        sa.event.remove(engine, "before_cursor_execute", count)
    assert len([s for s in statements if s.lstrip().upper().startswith("SELECT")]) == 2
    assert light[0].tags == () and dict(light[0].system_metadata) == {}
    assert dict(light[0].metadata) == dict(page[0].metadata)


def test_count_usage_excludes_deleted_hidden_and_soft_deleted(engine: sa.Engine) -> None:
    create(engine)
    create(engine, user_id="u2", flavor=BIG)
    create(engine, hidden=True)
    create(engine, vm_state="soft-delete")
    gone = create(engine)
    with engine.begin() as conn:
        repo.soft_delete(conn, gone.uuid)
        usage = repo.count_usage(conn, "p1", "u1")
    assert usage.project == {"instances": 2, "cores": 3, "ram": 2560}
    assert usage.user == {"instances": 1, "cores": 1, "ram": 512}


def test_faults_latest_shown_with_instance(engine: sa.Engine) -> None:
    inst = create(engine, vm_state="error")
    with engine.begin() as conn:
        faults.create(conn, inst.uuid, code=500, message="first", host="h1")
        faults.create(
            conn,
            inst.uuid,
            code=500,
            message="No valid host was found. " + "x" * 300,
            details="Traceback...",
        )
    with engine.connect() as conn:
        got = repo.get(conn, inst.uuid)
        listed = faults.list_for_instance(conn, inst.uuid)
    assert got.fault is not None
    assert (got.fault.code, len(got.fault.message), got.fault.details) == (500, 255, "Traceback...")
    assert got.fault.message.startswith("No valid host was found. ")
    assert [f.message for f in listed][1] == "first"


def test_actions_and_events(engine: sa.Engine) -> None:
    inst = create(engine)
    with engine.begin() as conn:
        actions.start_action(
            conn, inst.uuid, "create", request_id="req-1", user_id="u1", project_id="p1", now=T0
        )
        actions.start_action(
            conn,
            inst.uuid,
            "stop",
            request_id="req-2",
            user_id="u1",
            project_id="p1",
            now=T0 + timedelta(seconds=5),
        )
        actions.start_event(
            conn,
            inst.uuid,
            "req-1",
            "compute__do_build_and_run_instance",
            host="h1",
            now=T0 + timedelta(seconds=1),
        )
        event = actions.finish_event(
            conn,
            inst.uuid,
            "req-1",
            "compute__do_build_and_run_instance",
            result="Error",
            traceback="Traceback (most recent call last): ...",
            now=T0 + timedelta(seconds=2),
        )
        actions.finish_action(conn, inst.uuid, "req-1", now=T0 + timedelta(seconds=3))
    assert (event.result, event.host, event.finish_time) == (
        "Error",
        "h1",
        T0 + timedelta(seconds=2),
    )
    with engine.begin() as conn:
        # Deleting the instance keeps its actions.
        repo.soft_delete(conn, inst.uuid)
        listed = actions.list_actions(conn, inst.uuid)
        create_action = actions.get_action(conn, inst.uuid, "req-1")
        assert create_action is not None
        events = actions.list_events(conn, create_action.id)
        assert [a.action for a in actions.list_actions(conn, inst.uuid, marker="req-2")] == [
            "create"
        ]
        with pytest.raises(actions.ActionMarkerNotFound) as marker_err:
            actions.list_actions(conn, inst.uuid, marker="nope")
        with pytest.raises(InstanceActionNotFound) as err:
            actions.start_event(conn, inst.uuid, "req-9", "x")
        fallback = actions.start_event(conn, inst.uuid, "req-9", "x", fallback_to_last=True)
        with pytest.raises(actions.InstanceActionEventNotFound):
            actions.finish_event(conn, inst.uuid, "req-2", "nope", result="Success")
    assert [a.action for a in listed] == ["stop", "create"]
    assert (create_action.message, create_action.finish_time) == (
        "Error",
        T0 + timedelta(seconds=3),
    )
    assert [(e.event, e.result) for e in events] == [
        ("compute__do_build_and_run_instance", "Error")
    ]
    assert marker_err.value.message == "Marker nope could not be found."
    assert err.value.message == f"Action for request_id req-9 on instance {inst.uuid} not found"
    assert fallback.action_id == listed[0].id


def test_rows_decode_to_the_same_instances_as_the_dataclass_builds(engine: sa.Engine) -> None:
    created = create(engine)
    with engine.connect() as conn:
        fast = repo.get(conn, created.uuid)
    values = {name: getattr(fast, name) for name in instance_rows.INSTANCE_FIELDS}
    assert fast == Instance(**values)
    assert set(fast.__dict__) == instance_rows.INSTANCE_FIELDS


def test_list_pattern_the_database_refuses_is_a_400(engine: sa.Engine) -> None:
    create(engine, display_name="web-1", node="n1", key_name="k")
    refused = {"sqlite": "(((", "postgresql": "(?P<a>x)", "mysql": "\\u0041"}
    pattern = refused[engine.dialect.name]
    for filters, parameter in (
        (listing.InstanceFilters(name=pattern), "name"),
        (listing.InstanceFilters(node=pattern), "node"),
        (listing.InstanceFilters(regex={"key_name": pattern}), "key_name"),
    ):
        with pytest.raises(Invalid) as caught:
            _names(engine, filters)
        assert str(caught.value) == (
            f"Invalid input for query parameters {parameter}. Value: {pattern}. "
            f"'{pattern}' is not a 'regex'"
        )
    # Nova escapes "|" on MySQL (a bare one is refused there); elsewhere it alternates.
    mysql = engine.dialect.name == "mysql"
    assert _names(engine, listing.InstanceFilters(name="web|db")) == ([] if mysql else ["web-1"])
    assert _names(engine, listing.InstanceFilters(name="|")) == ([] if mysql else ["web-1"])
