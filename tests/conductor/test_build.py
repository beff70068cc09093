"""Conductor: schedule_and_build_instances (success, NoValidHost → cell0, build request deleted
during scheduling) and build_instances reschedules (alternate, then MaxRetriesExceeded)."""

from __future__ import annotations

import uuid as uuidlib
from collections.abc import Sequence
from dataclasses import replace

from openkeel.db.cells import CELL0_UUID
from openkeel.db.records import InstanceRecords
from openkeel.db.repositories import build_requests
from openkeel.domain.instances import Instance, InstanceNotFound
from openkeel.virt.fake_config import FakeDriverConfig
from tests.compute.cloud import RESOURCES, Cloud, wait_for
from tests.conductor.conftest import (
    FakeScheduler,
    build_request_exists,
    cast_build,
    cell_of,
    request_build,
)
from tests.conftest import CELL1_UUID


def test_schedule_and_build_goes_active(cloud: Cloud, scheduler: FakeScheduler) -> None:
    compute = cloud.compute().start(background=False)
    scheduler.hosts = [compute]
    instance = request_build(cloud)
    cast_build(cloud, instance)
    wait_for(lambda: cell_of(cloud, instance.uuid) == CELL1_UUID)
    wait_for(lambda: cloud.cell1.get(instance.uuid).vm_state == "active")
    built = cloud.cell1.get(instance.uuid)
    assert (built.host, built.task_state) == (compute.hostname, None)
    assert not build_request_exists(cloud, instance.uuid)


def test_no_valid_host_buries_in_cell0_with_fault(cloud: Cloud, scheduler: FakeScheduler) -> None:
    instance = request_build(cloud)
    cast_build(cloud, instance)
    wait_for(lambda: cell_of(cloud, instance.uuid) == CELL0_UUID)
    cell0 = InstanceRecords(cloud.services.cell_dbs[CELL0_UUID], cloud.clock)
    buried = cell0.get(instance.uuid)
    assert (buried.vm_state, buried.task_state, buried.host) == ("error", None, None)
    assert buried.fault is not None
    assert buried.fault.code == 500
    assert buried.fault.message == "No valid host was found. There are not enough hosts available."
    assert not build_request_exists(cloud, instance.uuid)
    assert cloud.placement.get_allocations(instance.uuid).allocations == {}


def test_build_request_deleted_during_scheduling(cloud: Cloud, scheduler: FakeScheduler) -> None:
    compute = cloud.compute().start(background=False)
    scheduler.hosts = [compute]

    def user_deletes(uuids: Sequence[str]) -> None:
        with cloud.services.api_db.begin() as conn:
            for uuid in uuids:
                build_requests.delete(conn, uuid)

    scheduler.before_answer = user_deletes
    instance = request_build(cloud)
    cast_build(cloud, instance)
    wait_for(lambda: cloud.placement.get_allocations(instance.uuid).allocations == {})
    wait_for(lambda: _deleted(cloud, instance.uuid))
    assert compute.host.driver.list_instance_uuids() == []


def _deleted(cloud: Cloud, uuid: str) -> bool:
    try:
        cloud.cell1.get(uuid)
    except InstanceNotFound:
        return True
    return False


def test_failed_build_is_rescheduled_to_the_alternate(
    cloud: Cloud, scheduler: FakeScheduler
) -> None:
    uuid = str(uuidlib.uuid4())
    failing = cloud.compute(
        FakeDriverConfig(nodes=(f"f-{uuid}",), fail_spawn_for=frozenset({uuid}))
    )
    failing.start(background=False)
    good = cloud.compute().start(background=False)
    scheduler.hosts = [failing, good]
    instance = request_build(cloud, uuid)
    cast_build(cloud, instance)
    wait_for(lambda: cell_of(cloud, uuid) == CELL1_UUID)
    wait_for(lambda: cloud.cell1.get(uuid).vm_state == "active")
    built = cloud.cell1.get(uuid)
    assert built.host == good.hostname
    good_node = good.host.tracker.node_for(None)
    assert good_node is not None
    assert cloud.placement.get_allocations(uuid).allocations == {good_node.uuid: RESOURCES}
    assert failing.host.driver.list_instance_uuids() == []


def test_reschedule_exhausted_is_error_with_fault(cloud: Cloud, scheduler: FakeScheduler) -> None:
    uuid = str(uuidlib.uuid4())
    hosts = [
        cloud.compute(FakeDriverConfig(nodes=(f"f{i}-{uuid}",), fail_spawn_for=frozenset({uuid})))
        for i in range(2)
    ]
    for host in hosts:
        host.start(background=False)
    scheduler.hosts = hosts
    instance = request_build(cloud, uuid)
    cast_build(cloud, instance)
    wait_for(lambda: cell_of(cloud, uuid) == CELL1_UUID)
    expected = (
        "Exceeded maximum number of retries. Exhausted all hosts available for retrying "
        f"build failures for instance {uuid}."
    )

    def settled() -> bool:
        # The last host's spawn failure lands first, the reschedule's verdict right after.
        current = cloud.cell1.get(uuid)
        return (
            current.vm_state == "error"
            and bool(current.fault)
            and (current.fault is not None and current.fault.message == expected)
        )

    wait_for(settled)
    failed = cloud.cell1.get(uuid)
    assert failed.task_state is None
    assert failed.fault is not None
    assert failed.fault.message == expected
    wait_for(lambda: cloud.placement.get_allocations(uuid).allocations == {})


def test_instance_payload_unchanged(cloud: Cloud) -> None:
    instance = replace(request_build(cloud), display_name="x")
    assert Instance.from_primitive(instance.to_primitive()) == instance
