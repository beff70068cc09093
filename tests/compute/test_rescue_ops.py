"""rescue / unrescue, set_admin_password and trigger_crash_dump on the compute host (fake
driver, fake clock): final states, events, faults, and the rescue_timeout periodic task."""

from __future__ import annotations

from typing import Any

import pytest

from openkeel.compute import guest
from openkeel.compute.operations import guest_requests, rescue
from openkeel.compute.operations.build import build_and_run
from openkeel.compute.service import ComputeService
from openkeel.db.repositories import instance_actions
from openkeel.domain.errors import Conflict, NotImplementedYet
from openkeel.domain.instances import Instance, InstanceUpdate
from openkeel.rpc.message import CallContext
from openkeel.rpc.messages.compute import BuildAndRunInstance, RescueInstance
from openkeel.virt import errors as virt_errors
from openkeel.virt.fake import FakeDriver
from tests.compute.cloud import Cloud
from tests.conftest import CELL1_UUID

CTX = CallContext(user_id="demo", project_id="demo")


def _running(cloud: Cloud, **overrides: object) -> tuple[ComputeService, Instance]:
    compute = cloud.compute(**overrides).start(background=False)
    instance = cloud.instance(compute)
    build_and_run(compute.host, CTX, BuildAndRunInstance(instance.uuid))
    return compute, cloud.cell1.get(instance.uuid)


def _start(cloud: Cloud, uuid: str, action: str, task: str | None, ctx: CallContext = CTX) -> None:
    cloud.cell1.update(uuid, InstanceUpdate(task_state=task))
    cloud.cell1.ensure_action(uuid, action, ctx.request_id, "demo", "demo")


def _events(cloud: Cloud, uuid: str, request_id: str) -> dict[str, str | None]:
    with cloud.services.cell_dbs[CELL1_UUID].connect() as conn:
        action = instance_actions.get_action(conn, uuid, request_id)
        assert action is not None
        return {e.event: e.result for e in instance_actions.list_events(conn, action.id)}


def _driver(compute: ComputeService) -> FakeDriver:
    driver = compute.host.driver
    assert isinstance(driver, FakeDriver)
    return driver


def test_rescue_then_unrescue(cloud: Cloud) -> None:
    compute, instance = _running(cloud)
    ref = guest.instance_ref(cloud.services.conf, instance)
    seen: list[Any] = []
    original = compute.host.driver.rescue

    def recording(spec: Any, image: Any, password: Any) -> None:
        seen.append((image, password))
        original(spec, image, password)

    compute.host.driver.rescue = recording  # type: ignore[method-assign]
    cloud.clock.advance(10)
    _start(cloud, instance.uuid, "rescue", "rescuing")
    rescue.rescue(compute.host, CTX, RescueInstance(instance.uuid, rescue_password="pw"))
    rescued = cloud.cell1.get(instance.uuid)
    assert (rescued.vm_state, rescued.task_state, rescued.power_state) == ("rescued", None, 1)
    assert rescued.launched_at == cloud.clock.now()
    assert _driver(compute).is_rescued(ref)
    ((image, password),) = seen
    assert (image.image_id, password) == ("img-1", "pw")  # the server's own image
    assert _events(cloud, instance.uuid, CTX.request_id) == {"compute_rescue_instance": "Success"}

    ctx = CallContext(user_id="demo", project_id="demo")
    _start(cloud, instance.uuid, "unrescue", "unrescuing", ctx)
    rescue.unrescue(compute.host, ctx, instance.uuid)
    back = cloud.cell1.get(instance.uuid)
    assert (back.vm_state, back.task_state, back.power_state) == ("active", None, 1)
    assert not _driver(compute).is_rescued(ref)
    assert _events(cloud, instance.uuid, ctx.request_id) == {"compute_unrescue_instance": "Success"}


def test_rescue_image_choice(cloud: Cloud) -> None:
    sysmeta = {"image_hw_rescue_bus": "virtio", "other": "x"}
    base = cloud.instance(image_ref="own", system_metadata=sysmeta)
    assert rescue.rescue_image(base, "asked").image_id == "asked"
    own = rescue.rescue_image(base, None)
    assert (own.image_id, dict(own.properties)) == ("own", {"hw_rescue_bus": "virtio"})
    derived = cloud.instance(image_ref="own", system_metadata={"image_base_image_ref": "base"})
    assert rescue.rescue_image(derived, None).image_id == "base"


def test_failed_rescue_puts_the_server_in_error_with_nova_fault(cloud: Cloud) -> None:
    compute, instance = _running(cloud)

    def broken(*_a: Any) -> None:
        raise virt_errors.PermanentDriverError("no rescue disk")

    compute.host.driver.rescue = broken  # type: ignore[method-assign, assignment]
    _start(cloud, instance.uuid, "rescue", "rescuing")
    rescue.rescue(compute.host, CTX, RescueInstance(instance.uuid))
    failed = cloud.cell1.get(instance.uuid)
    assert (failed.vm_state, failed.task_state) == ("error", None)
    assert failed.fault is not None
    assert failed.fault.message == (
        f"Instance {instance.uuid} cannot be rescued: Driver Error: no rescue disk"
    )
    assert _events(cloud, instance.uuid, CTX.request_id) == {"compute_rescue_instance": "Error"}


@pytest.mark.parametrize(
    ("error", "vm_state"),
    [(virt_errors.NotSupported("unrescue", "fake"), "active"),
     (virt_errors.PermanentDriverError("stuck"), "error")],
)  # fmt: skip
def test_failed_unrescue(cloud: Cloud, error: Exception, vm_state: str) -> None:
    compute, instance = _running(cloud)

    def broken(*_a: Any) -> None:
        raise error

    compute.host.driver.unrescue = broken  # type: ignore[method-assign, assignment]
    cloud.cell1.update(instance.uuid, InstanceUpdate(vm_state="rescued"))
    _start(cloud, instance.uuid, "unrescue", "unrescuing")
    rescue.unrescue(compute.host, CTX, instance.uuid)
    failed = cloud.cell1.get(instance.uuid)
    assert (failed.vm_state, failed.task_state) == (vm_state, None)
    assert failed.fault is not None and failed.fault.message == str(error)


def test_rescue_timeout_unrescues_after_the_timeout(cloud: Cloud) -> None:
    compute, instance = _running(cloud, rescue_timeout=300)
    _start(cloud, instance.uuid, "rescue", "rescuing")
    rescue.rescue(compute.host, CTX, RescueInstance(instance.uuid))
    cloud.clock.advance(300)
    compute.periodic.run("poll_rescued_instances")
    assert cloud.cell1.get(instance.uuid).vm_state == "rescued"
    cloud.clock.advance(1)
    compute.periodic.run("poll_rescued_instances")
    back = cloud.cell1.get(instance.uuid)
    assert (back.vm_state, back.task_state) == ("active", None)
    with cloud.services.cell_dbs[CELL1_UUID].connect() as conn:
        actions = instance_actions.list_actions(conn, instance.uuid)
    latest = actions[0]
    assert latest.action == "unrescue"
    assert _events(cloud, instance.uuid, latest.request_id) == {
        "compute_unrescue_instance": "Success"
    }


def test_rescue_timeout_zero_is_off_and_busy_servers_wait(cloud: Cloud) -> None:
    compute, instance = _running(cloud, rescue_timeout=0)
    cloud.cell1.update(instance.uuid, InstanceUpdate(vm_state="rescued"))
    cloud.clock.advance(100000)
    assert rescue.poll_rescued_instances(compute.host) == []
    cloud.services.conf.set_override("rescue_timeout", 60)
    cloud.cell1.update(instance.uuid, InstanceUpdate(task_state="unrescuing"))
    assert rescue.poll_rescued_instances(compute.host) == []
    cloud.cell1.update(instance.uuid, InstanceUpdate(task_state=None))
    assert rescue.poll_rescued_instances(compute.host) == [instance.uuid]


def test_set_admin_password(cloud: Cloud) -> None:
    compute, instance = _running(cloud)
    _start(cloud, instance.uuid, "changePassword", "updating_password")
    guest_requests.set_admin_password(compute.host, CTX, instance.uuid, "n3w")
    assert cloud.cell1.get(instance.uuid).task_state is None
    ref = guest.instance_ref(cloud.services.conf, instance)
    assert "admin password changed" in compute.host.driver.get_console_output(ref)
    assert _events(cloud, instance.uuid, CTX.request_id) == {
        "compute_set_admin_password": "Success"
    }


@pytest.mark.parametrize(
    ("error", "answer", "message"),
    [
        (virt_errors.GuestAgentNotEnabled("x"), Conflict, "Guest agent is not enabled for the instance"),
        (virt_errors.AdminPasswordNotSupported("x"), Conflict, "Set admin password is not supported"),
        (virt_errors.NotSupported("set_admin_password", "fake"), NotImplementedYet,
         "Unable to set password on instance"),
        (RuntimeError("secret pw in here"), Conflict,
         "Failed to set admin password on {uuid} because error setting admin password"),
    ],
)  # fmt: skip
def test_set_admin_password_refusals(
    cloud: Cloud, error: Exception, answer: type[Exception], message: str
) -> None:
    compute, instance = _running(cloud)

    def broken(*_a: Any) -> None:
        raise error

    compute.host.driver.set_admin_password = broken  # type: ignore[method-assign, assignment]
    _start(cloud, instance.uuid, "changePassword", "updating_password")
    with pytest.raises(answer) as info:
        guest_requests.set_admin_password(compute.host, CTX, instance.uuid, "pw")
    assert str(info.value) == message.format(uuid=instance.uuid)
    after = cloud.cell1.get(instance.uuid)
    assert (after.vm_state, after.task_state) == ("active", None)
    assert after.fault is not None and "secret" not in after.fault.message
    assert _events(cloud, instance.uuid, CTX.request_id) == {"compute_set_admin_password": "Error"}


def test_set_admin_password_of_a_guest_not_running(cloud: Cloud) -> None:
    compute, instance = _running(cloud)
    compute.host.driver.register_event_listener(None)  # no power sync racing the test
    compute.host.driver.power_off(guest.instance_ref(cloud.services.conf, instance))
    _start(cloud, instance.uuid, "changePassword", "updating_password")
    with pytest.raises(Conflict) as info:
        guest_requests.set_admin_password(compute.host, CTX, instance.uuid, "pw")
    assert str(info.value) == (
        f"Failed to set admin password on {instance.uuid} because instance {instance.uuid} "
        "is not running"
    )
    assert cloud.cell1.get(instance.uuid).task_state is None


def test_trigger_crash_dump(cloud: Cloud) -> None:
    compute, instance = _running(cloud)
    _start(cloud, instance.uuid, "trigger_crash_dump", None)
    guest_requests.trigger_crash_dump(compute.host, CTX, instance.uuid)
    ref = guest.instance_ref(cloud.services.conf, instance)
    assert "NMI received" in compute.host.driver.get_console_output(ref)
    after = cloud.cell1.get(instance.uuid)
    assert (after.vm_state, after.task_state, after.fault) == ("active", None, None)
    assert _events(cloud, instance.uuid, CTX.request_id) == {
        "compute_trigger_crash_dump": "Success"
    }


def test_trigger_crash_dump_unsupported_leaves_a_fault(cloud: Cloud) -> None:
    compute, instance = _running(cloud)

    def unsupported(*_a: Any) -> None:
        raise virt_errors.NotSupported("trigger_crash_dump", "kubevirt")

    compute.host.driver.trigger_crash_dump = unsupported  # type: ignore[method-assign, assignment]
    _start(cloud, instance.uuid, "trigger_crash_dump", None)
    guest_requests.trigger_crash_dump(compute.host, CTX, instance.uuid)
    after = cloud.cell1.get(instance.uuid)
    assert (after.vm_state, after.task_state) == ("active", None)
    assert after.fault is not None
    assert (after.fault.code, after.fault.message) == (
        400,
        "Triggering crash dump is not supported",
    )
    assert _events(cloud, instance.uuid, CTX.request_id) == {"compute_trigger_crash_dump": "Error"}


def test_rescue_preempted_by_another_task_is_not_an_error(cloud: Cloud) -> None:
    """The final save is a compare-and-swap on ``rescuing``: another operation that took the
    task meanwhile keeps it, and the server is not put in ERROR (Nova's preempted task)."""
    compute, instance = _running(cloud)
    original = compute.host.driver.rescue

    def preempted(spec: Any, image: Any, password: Any) -> None:
        original(spec, image, password)
        cloud.cell1.update(instance.uuid, InstanceUpdate(task_state="powering-off"))

    compute.host.driver.rescue = preempted  # type: ignore[method-assign]
    _start(cloud, instance.uuid, "rescue", "rescuing")
    rescue.rescue(compute.host, CTX, RescueInstance(instance.uuid))
    after = cloud.cell1.get(instance.uuid)
    assert (after.vm_state, after.task_state) == ("active", "powering-off")
    assert _events(cloud, instance.uuid, CTX.request_id) == {"compute_rescue_instance": "Error"}
