"""Guests that must not outlive their server, and guests that change by themselves.

- a failed build whose guest cannot be destroyed is not rescheduled (Nova's
  BuildAbortException): ERROR, a fault, and the server keeps its host so its delete reaches
  the guest;
- ``cleanup_running_deleted_instances`` (Nova's running_deleted_instance_action) removes the
  guest of a deleted server, or only logs it, and leaves guests it does not know alone;
- a lifecycle event from the driver (a guest that stopped by itself) reaches the power sync
  at once, not only at the next periodic run.
"""

from __future__ import annotations

import pytest

from openkeel.compute import guest, periodic_tasks
from openkeel.compute.operations.build import build_and_run
from openkeel.rpc.message import CallContext
from openkeel.rpc.messages.compute import BuildAndRunInstance
from openkeel.virt.fake import FakeDriver
from openkeel.virt.fake_config import InjectedFailure
from openkeel.virt.model import FlavorSpec, ImageSpec, InstanceRef, InstanceSpec
from tests.compute.cloud import Cloud, wait_for

CTX = CallContext(user_id="demo", project_id="demo")
RETRY = {"retry": {"num_attempts": 1, "hosts": []}}


def _driver(compute: object) -> FakeDriver:
    driver = compute.host.driver  # type: ignore[attr-defined]
    assert isinstance(driver, FakeDriver)
    return driver


def test_failed_build_whose_guest_cannot_be_destroyed_is_not_rescheduled(cloud: Cloud) -> None:
    compute = cloud.compute().start(background=False)
    instance = cloud.instance(compute)
    failures = (InjectedFailure("spawn", instance.uuid), InjectedFailure("destroy", instance.uuid))  # fmt: skip
    _driver(compute)._failures = {f: f.times for f in failures}
    build_and_run(compute.host, CTX, BuildAndRunInstance(instance.uuid, filter_properties=RETRY))
    failed = cloud.cell1.get(instance.uuid)
    # not handed back for a reschedule (task scheduling, no host): ERROR on this host
    assert (failed.vm_state, failed.task_state, failed.host) == ("error", None, compute.hostname)
    assert failed.fault is not None
    assert failed.fault.message.startswith(f"Build of instance {instance.uuid} aborted:")


def test_failed_build_whose_guest_is_destroyed_is_rescheduled(cloud: Cloud) -> None:
    compute = cloud.compute().start(background=False)
    instance = cloud.instance(compute)
    _driver(compute)._failures = {InjectedFailure("spawn", instance.uuid): None}
    build_and_run(compute.host, CTX, BuildAndRunInstance(instance.uuid, filter_properties=RETRY))
    handed_back = cloud.cell1.get(instance.uuid)
    assert (handed_back.vm_state, handed_back.task_state, handed_back.host) == ("building", "scheduling", None)  # fmt: skip
    assert _driver(compute).list_instance_uuids() == []


def _spec(uuid: str) -> InstanceSpec:
    ref = InstanceRef(uuid, f"instance-{uuid[:8]}", "demo")
    return InstanceSpec(ref, "vm", "demo", FlavorSpec("1", "m1", 1, 512, 1), ImageSpec("img-1"))


@pytest.mark.parametrize(("action", "reaped"), [("reap", True), ("log", False)])
def test_guest_of_a_deleted_server_is_reaped(cloud: Cloud, action: str, reaped: bool) -> None:
    compute = cloud.compute(running_deleted_instance_action=action).start(background=False)
    instance = cloud.instance(compute)
    build_and_run(compute.host, CTX, BuildAndRunInstance(instance.uuid))
    # the server is deleted by something that could not reach the guest (a local delete)
    cloud.cell1.delete_row(instance.uuid)
    stranger = "0b9e1f3c-5d3e-4f0a-9a53-2f1c1b1e7a11"  # a guest no server of this cell owns
    _driver(compute).spawn(_spec(stranger))
    acted = periodic_tasks.cleanup_running_deleted_instances(compute.host)
    assert acted == ([instance.uuid] if reaped else [])
    left = set(_driver(compute).list_instance_uuids())
    assert left == ({stranger} if reaped else {stranger, instance.uuid})


def test_running_deleted_instance_timeout_waits(cloud: Cloud) -> None:
    compute = cloud.compute(running_deleted_instance_timeout=600).start(background=False)
    instance = cloud.instance(compute)
    build_and_run(compute.host, CTX, BuildAndRunInstance(instance.uuid))
    deleted_at = cloud.cell1.delete_row(instance.uuid).deleted_at
    assert deleted_at is not None
    cloud.clock._now = deleted_at  # the clock starts at the deletion time
    assert periodic_tasks.cleanup_running_deleted_instances(compute.host) == []
    cloud.clock.advance(601)
    assert periodic_tasks.cleanup_running_deleted_instances(compute.host) == [instance.uuid]


def test_guest_that_stops_by_itself_stops_the_server_at_once(cloud: Cloud) -> None:
    compute = cloud.compute().start(background=False)
    instance = cloud.instance(compute)
    build_and_run(compute.host, CTX, BuildAndRunInstance(instance.uuid))
    ref = guest.instance_ref(cloud.services.conf, cloud.cell1.get(instance.uuid))
    _driver(compute).power_off(ref)  # the guest shuts down: the driver emits STOPPED

    def stopped() -> bool:
        found = cloud.cell1.get(instance.uuid)
        return (found.vm_state, found.task_state, found.power_state) == ("stopped", None, 4)

    wait_for(stopped)  # no periodic run: the event did it
