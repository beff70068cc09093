"""Periodic tasks with a fake clock (power sync, build timeout, reclaim) and start-up
reconciliation after a simulated crash."""

from __future__ import annotations

import threading

import pytest

from openkeel.compute import guest
from openkeel.compute.operations.build import build_and_run
from openkeel.domain.instances import InstanceNotFound, InstanceUpdate
from openkeel.rpc.message import CallContext
from openkeel.rpc.messages.compute import BuildAndRunInstance
from tests.compute.cloud import RESOURCES, Cloud

CTX = CallContext(user_id="demo", project_id="demo")


def test_power_sync_stops_active_instance_whose_guest_shut_down(cloud: Cloud) -> None:
    compute = cloud.compute().start(background=False)
    instance = cloud.instance(compute)
    build_and_run(compute.host, CTX, BuildAndRunInstance(instance.uuid))
    ref = guest.instance_ref(cloud.services.conf, cloud.cell1.get(instance.uuid))
    compute.host.driver.power_off(ref)
    cloud.clock.advance(599)
    assert "sync_power_states" not in compute.periodic.run_due()
    cloud.clock.advance(1)
    assert "sync_power_states" in compute.periodic.run_due()
    synced = cloud.cell1.get(instance.uuid)
    assert (synced.vm_state, synced.task_state, synced.power_state) == ("stopped", None, 4)


def test_power_sync_stops_running_guest_of_stopped_instance(cloud: Cloud) -> None:
    compute = cloud.compute().start(background=False)
    instance = cloud.instance(compute)
    build_and_run(compute.host, CTX, BuildAndRunInstance(instance.uuid))
    cloud.cell1.update(instance.uuid, InstanceUpdate(vm_state="stopped", power_state=4))
    compute.periodic.run("sync_power_states")
    after = cloud.cell1.get(instance.uuid)
    ref = guest.instance_ref(cloud.services.conf, after)
    state = (after.vm_state, after.task_state, after.power_state)
    assert compute.host.driver.get_info(ref).state == 4, f"record: {state}"
    assert after.power_state == 4


def test_build_timeout_sets_error_with_fault(cloud: Cloud) -> None:
    compute = cloud.compute().start(background=False)
    instance = cloud.instance(compute, task_state="spawning")
    created = cloud.cell1.get(instance.uuid).created_at
    assert created is not None
    cloud.clock._now = created  # the clock starts at the creation time
    cloud.clock.advance(600)
    compute.periodic.run("check_instance_build_time")
    assert cloud.cell1.get(instance.uuid).vm_state == "building"
    cloud.clock.advance(1)
    compute.periodic.run("check_instance_build_time")
    timed_out = cloud.cell1.get(instance.uuid)
    assert (timed_out.vm_state, timed_out.task_state) == ("error", None)
    assert timed_out.fault is not None
    assert timed_out.fault.message == "Instance build timed out. Set to error state."


def test_build_timeout_zero_is_off(cloud: Cloud) -> None:
    compute = cloud.compute(instance_build_timeout=0).start(background=False)
    instance = cloud.instance(compute)
    cloud.clock.advance(100000)
    compute.periodic.run("check_instance_build_time")
    assert cloud.cell1.get(instance.uuid).vm_state == "building"


def test_reclaim_soft_deleted(cloud: Cloud) -> None:
    compute = cloud.compute(reclaim_instance_interval=3600).start(background=False)
    instance = cloud.instance(compute)
    build_and_run(compute.host, CTX, BuildAndRunInstance(instance.uuid))
    cloud.cell1.update(instance.uuid, InstanceUpdate(vm_state="soft-delete"))
    cloud.clock.advance(3601)
    compute.periodic.run("reclaim_queued_deletes")
    with pytest.raises(InstanceNotFound):
        cloud.cell1.get(instance.uuid)
    assert cloud.placement.get_allocations(instance.uuid).allocations == {}


def test_restart_after_crash_mid_build_converges(cloud: Cloud) -> None:
    compute = cloud.compute().start(background=False)
    spawning = cloud.instance(compute, task_state="spawning")
    deleting = cloud.instance(compute)
    build_and_run(compute.host, CTX, BuildAndRunInstance(deleting.uuid))
    cloud.cell1.update(deleting.uuid, InstanceUpdate(task_state="deleting"))
    stopping = cloud.instance(compute)
    build_and_run(compute.host, CTX, BuildAndRunInstance(stopping.uuid))
    cloud.cell1.update(stopping.uuid, InstanceUpdate(task_state="powering-off"))
    node = compute.host.tracker.node_for(None)
    assert node is not None
    orphan = "99999999-9999-4999-8999-999999999999"
    cloud.placement.claim(orphan, {node.uuid: RESOURCES}, project_id="demo", user_id="demo")
    compute.stop()  # the "crash": states stay as they were

    compute.start(background=False)

    errored = cloud.cell1.get(spawning.uuid)
    assert (errored.vm_state, errored.task_state) == ("error", None)
    assert errored.fault is not None
    assert errored.fault.message == (
        "Instance was in vm_state building, task_state spawning when the compute service restarted."
    )
    with pytest.raises(InstanceNotFound):
        cloud.cell1.get(deleting.uuid)
    assert cloud.placement.get_allocations(deleting.uuid).allocations == {}
    stopped = cloud.cell1.get(stopping.uuid)
    assert (stopped.vm_state, stopped.task_state) == ("stopped", None)
    assert cloud.placement.get_allocations(orphan).allocations == {}
    consumers = set(cloud.placement.get_provider_allocations(node.uuid))
    assert consumers == {spawning.uuid, stopping.uuid}


def test_operation_whose_cast_was_lost_is_settled_after_the_stale_timeout(cloud: Cloud) -> None:
    """A stop accepted by the API whose cast vanished (broker restart): no thread runs it, so
    after ``stale_task_timeout`` compute finishes it as a restart would."""
    compute = cloud.compute().start(background=False)
    instance = cloud.instance(compute)
    build_and_run(compute.host, CTX, BuildAndRunInstance(instance.uuid))
    cloud.cell1.update(instance.uuid, InstanceUpdate(task_state="powering-off"))
    cloud.clock.advance(899)
    compute.periodic.run("recover_stale_operations")
    assert cloud.cell1.get(instance.uuid).task_state == "powering-off"  # not stale yet
    cloud.clock.advance(2)
    held, release = threading.Event(), threading.Event()

    def operation_in_flight() -> None:
        with compute.host.locks.hold(instance.uuid):
            held.set()
            release.wait(10)

    worker = threading.Thread(target=operation_in_flight)
    worker.start()
    assert held.wait(10)
    compute.periodic.run("recover_stale_operations")
    release.set()
    worker.join()
    assert cloud.cell1.get(instance.uuid).task_state == "powering-off"
    compute.periodic.run("recover_stale_operations")
    stopped = cloud.cell1.get(instance.uuid)
    assert (stopped.vm_state, stopped.task_state, stopped.power_state) == ("stopped", None, 4)
