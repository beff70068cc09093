"""Periodic tasks with a fake clock (power sync, build timeout, reclaim) and start-up
reconciliation after a simulated crash."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace

import pytest

from openkeel.clients.image import Caller, Image, ImageNotFound, ImageServiceUnavailable
from openkeel.compute import guest
from openkeel.compute.move_recovery import recover_moves
from openkeel.compute.operations.build import build_and_run
from openkeel.compute.service import ComputeService
from openkeel.db.repositories import migrations
from openkeel.domain.instances import InstanceNotFound, InstanceUpdate
from openkeel.rpc.message import CallContext
from openkeel.rpc.messages.compute import BuildAndRunInstance
from tests.compute.cloud import FLAVOR, RESOURCES, Cloud
from tests.conftest import CELL1_UUID

CTX = CallContext(user_id="demo", project_id="demo")


def _periodic_only(compute: ComputeService) -> ComputeService:
    """No lifecycle events: the driver's events would have the lifecycle handler's thread
    call the same stop as the periodic task, at a moment of its own (a late ``Started`` of
    the build, the ``Stopped`` of the test's power off), and the test would check the record
    while that thread is still stopping the guest. The periodic task alone is under test."""
    compute.host.driver.register_event_listener(None)
    return compute


def test_power_sync_stops_active_instance_whose_guest_shut_down(cloud: Cloud) -> None:
    compute = _periodic_only(cloud.compute().start(background=False))
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
    compute = _periodic_only(cloud.compute().start(background=False))
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


def test_moved_resize_settled_on_restart_keeps_the_flavor_its_claim_holds(cloud: Cloud) -> None:
    """A resize interrupted after the guest left the source (migration ``post-migrating``) but
    before the destination switched the flavor (the database was down when it tried): start-up
    settles it in ERROR on the destination with the new flavor, the one the destination's
    claim holds, and frees the source side the migration held."""
    bigger = replace(FLAVOR, flavorid="2", name="m1.bigger", memory_mb=1024, vcpus=2, id=2)
    compute = cloud.compute().start(background=False)
    instance = cloud.instance(compute, vm_state="active", task_state="resize_migrated",
                              old_flavor=FLAVOR, new_flavor=bigger)  # fmt: skip
    node = compute.host.tracker.node_for(None)
    assert node is not None
    with cloud.services.cell_dbs[CELL1_UUID].begin() as conn:
        migration = migrations.create(
            conn, instance_uuid=instance.uuid, migration_type="resize", status="post-migrating",
            source_compute=compute.hostname, dest_compute=compute.hostname,
            source_node=node.nodename, dest_node=node.nodename,
        )  # fmt: skip
    source_side = cloud.placement.get_allocations(instance.uuid).allocations
    cloud.placement.claim(migration.uuid, source_side, project_id="demo", user_id="demo")
    new_claim = {node.uuid: {"VCPU": 2, "MEMORY_MB": 1024, "DISK_GB": 1}}
    generation = cloud.placement.get_allocations(instance.uuid).generation
    cloud.placement.claim(instance.uuid, new_claim, project_id="demo", user_id="demo",
                          consumer_generation=generation)  # fmt: skip

    assert recover_moves(compute.host) == [instance.uuid]

    settled = cloud.cell1.get(instance.uuid)
    assert (settled.vm_state, settled.task_state) == ("error", None)
    assert settled.flavor is not None and settled.flavor.name == "m1.bigger"
    assert (settled.host, settled.node) == (compute.hostname, node.nodename)
    assert settled.fault is not None
    assert cloud.placement.get_allocations(instance.uuid).allocations == new_claim
    assert cloud.placement.get_allocations(migration.uuid).allocations == {}


class _Catalog:
    """The image service as the pass sees it: one image active, one deleted, one unreachable."""

    def get(self, caller: Caller, image_id: str) -> Image:
        if image_id == "unreachable":
            raise ImageServiceUnavailable("Glance is down")
        if image_id == "active":
            return Image(id=image_id, name="x", status="active")
        if image_id == "killed":
            return Image(id=image_id, name="x", status="killed")
        raise ImageNotFound(image_id)


def test_image_cache_pass_asks_the_driver_to_drop_deleted_images(
    cloud: Cloud, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every [image_cache] manager_interval the driver is given the image service's word on
    each image it keeps: gone (404, killed) or not (active, or the service unreachable)."""
    compute = cloud.compute().start(background=False)
    compute.host.images = _Catalog()  # type: ignore[assignment]
    answers: dict[str, bool] = {}

    def manage_image_cache(image_gone: Callable[[str], bool]) -> list[str]:
        answers.update({i: image_gone(i) for i in ("active", "killed", "missing", "unreachable")})
        return [i for i, gone in answers.items() if gone]

    monkeypatch.setattr(compute.host.driver, "manage_image_cache", manage_image_cache)
    cloud.clock.advance(2399)
    assert "image_cache_manager_pass" not in compute.periodic.run_due()
    cloud.clock.advance(1)
    assert "image_cache_manager_pass" in compute.periodic.run_due()
    assert answers == {"active": False, "killed": True, "missing": True, "unreachable": False}


@pytest.mark.parametrize("durable", [True, False], ids=["rabbit", "in-process"])
def test_restart_leaves_a_move_its_conductor_has_not_recorded_yet(
    cloud: Cloud, monkeypatch: pytest.MonkeyPatch, durable: bool
) -> None:
    """A resize the API accepted (task ``resize_prep``) whose conductor has not recorded the
    migration yet when compute restarts. Over RabbitMQ the conductor (another process) may
    still be at work: the task stays (clearing it let a second resize start while the first
    one's conductor still moved allocations: tests/faults saw the server end with a flavor its
    allocation did not match) and the stale-operation task settles it after
    ``stale_task_timeout`` if no conductor comes. In process the cast died with the process:
    cleared at once, as Nova does."""
    monkeypatch.setattr(cloud.transport, "durable", durable)
    compute = cloud.compute().start(background=False)
    instance = cloud.instance(compute)
    build_and_run(compute.host, CTX, BuildAndRunInstance(instance.uuid))
    cloud.cell1.update(instance.uuid, InstanceUpdate(task_state="resize_prep"))
    compute.stop()
    compute.start(background=False)
    assert cloud.cell1.get(instance.uuid).task_state == ("resize_prep" if durable else None)
    cloud.clock.advance(901)
    compute.periodic.run("recover_stale_operations")
    settled = cloud.cell1.get(instance.uuid)
    assert (settled.vm_state, settled.task_state) == ("active", None)
