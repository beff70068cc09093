"""Conductor: builds no role owns any more are settled (ERROR with a fault, never BUILD for
good), and a server deleted while it is scheduled leaves nothing behind; see
openkeel/conductor/tasks/orphans.py."""

from __future__ import annotations

import datetime
import json
from collections.abc import Iterator, Sequence
from dataclasses import replace

import pytest

from openkeel.api.usecases.servers.create import withdraw_build_requests
from openkeel.conductor.service import ConductorService
from openkeel.conductor.tasks import orphans
from openkeel.db.cells import CELL0_UUID
from openkeel.db.records import InstanceRecords
from openkeel.db.repositories import instance_mappings
from openkeel.domain.instances import Instance, InstanceNotFound
from tests.compute.cloud import Cloud, wait_for
from tests.conductor.conftest import (
    FakeScheduler,
    build_request_exists,
    cast_build,
    cell_of,
    request_build,
)
from tests.conftest import CELL1_UUID

INTERRUPTED = orphans.BuildInterrupted().message


@pytest.fixture
def conductors(cloud: Cloud) -> Iterator[list[ConductorService]]:
    """Conductors a test starts (stopped at the end)."""
    started: list[ConductorService] = []
    yield started
    for conductor in started:
        conductor.stop()


def _conductor(cloud: Cloud, conductors: list[ConductorService]) -> ConductorService:
    service = ConductorService(
        cloud.services.conf, cloud.transport, cloud.services.api_db, cloud.services.cell_dbs,
        cloud.placement, clock=cloud.clock, host=f"c{len(conductors)}",
    )  # fmt: skip
    conductors.append(service)
    return service


def _live(cloud: Cloud, cell_uuid: str, uuid: str) -> Instance | None:
    try:
        return InstanceRecords(cloud.services.cell_dbs[cell_uuid], cloud.clock).get(uuid)
    except InstanceNotFound:
        return None


def _discarded(cloud: Cloud, cell_uuid: str, uuid: str) -> bool:
    """The conductor created the row and deleted it again."""
    records = InstanceRecords(cloud.services.cell_dbs[cell_uuid], cloud.clock)
    try:
        row = records.get(uuid, read_deleted="yes")
    except InstanceNotFound:
        return False
    return row.deleted and row.vm_state == "deleted"


def _mapping_exists(cloud: Cloud, uuid: str) -> bool:
    with cloud.services.api_db.connect() as conn:
        return instance_mappings.find(conn, uuid) is not None


def _claim(cloud: Cloud, scheduler: FakeScheduler, uuid: str) -> None:
    compute = cloud.compute().start(background=False)
    request = json.loads(cloud.allocation_request(compute))["allocations"]
    cloud.placement.claim(
        uuid, {rp: a["resources"] for rp, a in request.items()}, project_id="demo", user_id="demo"
    )


def _assert_buried(cloud: Cloud, uuid: str) -> None:
    assert cell_of(cloud, uuid) == CELL0_UUID
    assert not build_request_exists(cloud, uuid)
    buried = _live(cloud, CELL0_UUID, uuid)
    assert buried is not None
    assert (buried.vm_state, buried.task_state) == ("error", None)
    assert buried.fault is not None and buried.fault.message == INTERRUPTED
    assert cloud.placement.get_allocations(uuid).allocations == {}


def test_user_delete_during_scheduling_leaves_nothing(
    cloud: Cloud, scheduler: FakeScheduler
) -> None:
    """The API drops build request and mapping together; the conductor must cope."""
    compute = cloud.compute().start(background=False)
    scheduler.hosts = [compute]

    def user_deletes(uuids: Sequence[str]) -> None:
        assert withdraw_build_requests(cloud.services.api_db, list(uuids)) == list(uuids)

    scheduler.before_answer = user_deletes
    instance = request_build(cloud)
    cast_build(cloud, instance)
    wait_for(lambda: _discarded(cloud, CELL1_UUID, instance.uuid))
    assert cloud.placement.get_allocations(instance.uuid).allocations == {}
    assert not _mapping_exists(cloud, instance.uuid)
    assert _live(cloud, CELL0_UUID, instance.uuid) is None
    assert compute.host.driver.list_instance_uuids() == []


def test_build_request_older_than_the_process_is_settled_at_start(
    cloud: Cloud, scheduler: FakeScheduler, conductors: list[ConductorService]
) -> None:
    """In-process transport: the cast died with the process that accepted the server."""
    instance = request_build(cloud)
    _claim(cloud, scheduler, instance.uuid)  # the scheduler had claimed before the crash
    cloud.clock.advance(1)
    _conductor(cloud, conductors).start(background=False)
    _assert_buried(cloud, instance.uuid)


def test_build_that_reached_its_cell_is_set_to_error_there(
    cloud: Cloud, scheduler: FakeScheduler, conductors: list[ConductorService]
) -> None:
    """Killed after creating the row in the cell, before handing the build over."""
    instance = request_build(cloud)
    _claim(cloud, scheduler, instance.uuid)
    cloud.cell1.create(replace(instance, host="gone-host", node="gone-node"))
    cloud.clock.advance(1)
    _conductor(cloud, conductors).start(background=False)
    assert cell_of(cloud, instance.uuid) == CELL1_UUID
    assert not build_request_exists(cloud, instance.uuid)
    failed = _live(cloud, CELL1_UUID, instance.uuid)
    assert failed is not None and (failed.vm_state, failed.task_state) == ("error", None)
    assert failed.fault is not None and failed.fault.message == INTERRUPTED
    assert cloud.placement.get_allocations(instance.uuid).allocations == {}
    assert _live(cloud, CELL0_UUID, instance.uuid) is None


def test_periodic_sweep_settles_build_requests_older_than_the_timeout(
    cloud: Cloud, scheduler: FakeScheduler, conductors: list[ConductorService]
) -> None:
    conductor = _conductor(cloud, conductors).start(background=False)
    instance = request_build(cloud)
    cloud.clock.advance(60)
    conductor.periodic.run_due()
    assert build_request_exists(cloud, instance.uuid)  # younger than build_request_timeout
    cloud.clock.advance(400)
    assert conductor.periodic.run_due() == ["sweep_orphaned_builds"]
    _assert_buried(cloud, instance.uuid)


def test_slow_conductor_loses_to_the_sweep_and_discards_its_row(
    cloud: Cloud, scheduler: FakeScheduler, conductors: list[ConductorService]
) -> None:
    """Exactly one of them settles the build: the conductor finds its build request gone."""
    compute = cloud.compute().start(background=False)
    scheduler.hosts = [compute]
    sweeper = _conductor(cloud, conductors)  # not started: only its sweep is used
    future = cloud.clock.now() + datetime.timedelta(days=1)
    scheduler.before_answer = lambda _uuids: orphans.sweep_build_requests(sweeper.deps, future)
    instance = request_build(cloud)
    cast_build(cloud, instance)
    wait_for(lambda: _discarded(cloud, CELL1_UUID, instance.uuid))
    _assert_buried(cloud, instance.uuid)
    assert compute.host.driver.list_instance_uuids() == []


def test_cell_row_without_a_server_is_removed(
    cloud: Cloud, scheduler: FakeScheduler, conductors: list[ConductorService]
) -> None:
    """The user deleted the server while it was scheduled and the conductor died before
    cleaning its row up: lists would show it for good."""
    old = cloud.clock.now() - datetime.timedelta(minutes=5)
    ghost = request_build(cloud)
    withdraw_build_requests(cloud.services.api_db, [ghost.uuid])
    cloud.cell1.create(replace(ghost, host="h", node="n", created_at=old))
    kept = request_build(cloud)  # still being scheduled: its row must stay
    cloud.cell1.create(replace(kept, host="h", node="n", created_at=old))
    removed = orphans.sweep_unmapped_instances(
        _conductor(cloud, conductors).deps, cloud.clock.now()
    )
    assert removed == 1
    assert _live(cloud, CELL1_UUID, ghost.uuid) is None
    assert _live(cloud, CELL1_UUID, kept.uuid) is not None


def test_live_row_marked_deleted_without_a_server_is_removed(
    cloud: Cloud, conductors: list[ConductorService]
) -> None:
    """A removal cut short by a database restart (the row said DELETED, the soft delete never
    ran): the server is gone from the API DB, the row must not stay listed for good."""
    old = cloud.clock.now() - datetime.timedelta(minutes=5)
    ghost = request_build(cloud)
    withdraw_build_requests(cloud.services.api_db, [ghost.uuid])
    cloud.cell1.create(replace(ghost, host="h", node="n", created_at=old, vm_state="deleted"))
    removed = orphans.sweep_unmapped_instances(
        _conductor(cloud, conductors).deps, cloud.clock.now()
    )
    assert removed == 1
    assert _live(cloud, CELL1_UUID, ghost.uuid) is None


def test_build_on_a_host_that_never_came_back_is_set_to_error(
    cloud: Cloud, conductors: list[ConductorService]
) -> None:
    """Handed to a host that then went away for good: its own restart would have settled the
    build, but it never restarts. A build on a host that still reports is left alone."""
    alive = cloud.compute().start(background=False)  # reports now
    old = cloud.clock.now() - datetime.timedelta(minutes=10)
    lost = replace(request_build(cloud), host="lost-host", node="n", created_at=old)
    slow = replace(request_build(cloud), host=alive.hostname, node="n", created_at=old)
    cloud.cell1.create(lost)
    cloud.cell1.create(slow)
    deps = _conductor(cloud, conductors).deps
    cutoff = cloud.clock.now() - datetime.timedelta(minutes=5)
    assert orphans.sweep_builds_on_dead_hosts(deps, cutoff) == 1
    failed = _live(cloud, CELL1_UUID, lost.uuid)
    assert failed is not None and (failed.vm_state, failed.task_state) == ("error", None)
    assert failed.fault is not None and "lost-host stopped reporting" in failed.fault.message
    kept = _live(cloud, CELL1_UUID, slow.uuid)
    assert kept is not None and kept.vm_state == "building"
    assert orphans.sweep_builds_on_dead_hosts(deps, cutoff) == 0  # settled once
