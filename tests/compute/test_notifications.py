"""Compute operations notify as Nova's compute manager does: start/end around each operation
(after the instance action event starts, before it finishes), ``.error`` and
``compute.exception`` on failures, ``instance.exists`` from the usage audit and
``service.create`` at the first start; every versioned one matches Nova's sample."""

from __future__ import annotations

import datetime
import uuid as uuidlib

from openkeel.compute.operations import delete, pause, power
from openkeel.compute.operations.build import build_and_run
from openkeel.compute.service import ComputeService
from openkeel.compute.usage_audit import instance_usage_audit
from openkeel.db.records import InstanceRecords
from openkeel.domain.instances import InstanceUpdate
from openkeel.notifications.drivers import MemoryDriver
from openkeel.notifications.emitter import Notifier
from openkeel.notifications.instance_updates import SaveNotifier
from openkeel.rpc.message import CallContext
from openkeel.rpc.messages.compute import BuildAndRunInstance
from openkeel.virt.fake_config import FakeDriverConfig
from tests.compute.cloud import Cloud
from tests.conftest import CELL1_UUID
from tests.notifications.samples import assert_matches

CTX = CallContext(user_id="demo", project_id="demo", request_id="req-1")


def _listen(compute: ComputeService, fmt: str = "both") -> MemoryDriver:
    memory = MemoryDriver()
    notifier = Notifier(drivers=(memory,), notification_format=fmt)
    compute.host.notifier = notifier.prepare("nova-compute", compute.hostname)
    return memory


def _versioned(memory: MemoryDriver) -> list[str]:
    sent = [s.message for s in memory.sent if s.topic == "versioned_notifications"]
    for message in sent:
        assert_matches(message, message["event_type"].replace(".", "-"))
    return [m["event_type"] for m in sent]


def test_build_power_pause_delete_notify(cloud: Cloud) -> None:
    compute = cloud.compute().start(background=False)
    memory = _listen(compute)
    instance = cloud.instance(compute)
    build_and_run(compute.host, CTX, BuildAndRunInstance(instance.uuid))
    for task, operation in (
        ("powering-off", power.stop),
        ("powering-on", power.start),
        ("rebooting", lambda h, c, u: power.reboot(h, c, u, "SOFT")),
        ("pausing", pause.pause),
        ("unpausing", pause.unpause),
        ("deleting", delete.terminate),
    ):
        cloud.cell1.update(instance.uuid, InstanceUpdate(task_state=task))
        operation(compute.host, CTX, instance.uuid)
    assert _versioned(memory) == [
        "instance.create.start", "instance.create.end",
        "instance.power_off.start", "instance.power_off.end",
        "instance.power_on.start", "instance.power_on.end",
        "instance.reboot.start", "instance.reboot.end",
        "instance.pause.start", "instance.pause.end",
        "instance.unpause.start", "instance.unpause.end",
        "instance.delete.start", "instance.shutdown.start", "instance.shutdown.end",
        "instance.delete.end",
    ]  # fmt: skip
    sent = {s.message["event_type"]: s.message for s in memory.sent}
    end = sent["instance.create.end"]["payload"]["nova_object.data"]
    assert (end["state"], end["power_state"], end["host"]) == (
        "active",
        "running",
        compute.hostname,
    )
    assert end["ip_addresses"][0]["nova_object.data"]["address"] == "10.0.0.2"
    assert end["request_id"] == "req-1" and end["action_initiator_user"] == "demo"
    assert sent["instance.delete.end"]["payload"]["nova_object.data"]["state"] == "deleted"
    assert sent["compute.instance.delete.end"]["publisher_id"] == f"compute.{compute.hostname}"


def test_failed_build_sends_create_error_and_compute_exception(cloud: Cloud) -> None:
    uuid = str(uuidlib.uuid4())  # unique: the embedded Placement is shared by the package
    config = FakeDriverConfig(nodes=(f"n-{uuid}",), fail_spawn_for=frozenset({uuid}))
    compute = cloud.compute(config).start(background=False)
    memory = _listen(compute, "versioned")
    build_and_run(compute.host, CTX, BuildAndRunInstance(cloud.instance(compute, uuid=uuid).uuid))
    assert _versioned(memory) == ["instance.create.start", "instance.create.error", "compute.exception"]  # fmt: skip
    fault = memory.sent[1].message["payload"]["nova_object.data"]["fault"]["nova_object.data"]
    assert fault["exception_message"] == f"Injected spawn failure for {uuid}"


def test_build_of_a_deleted_instance_reports_no_error(cloud: Cloud) -> None:
    compute = cloud.compute().start(background=False)
    memory = _listen(compute)
    instance = cloud.instance(compute, task_state="deleting")
    build_and_run(compute.host, CTX, BuildAndRunInstance(instance.uuid))
    assert _versioned(memory) == ["instance.create.start"]


def test_usage_audit_sends_instance_exists(cloud: Cloud) -> None:
    compute = cloud.compute(instance_usage_audit=True, instance_usage_audit_period="hour")
    compute.start(background=False)
    memory = _listen(compute)
    launched = cloud.clock.now() - datetime.timedelta(hours=3)
    instance = cloud.instance(compute, vm_state="active", task_state=None, launched_at=launched)
    assert instance_usage_audit(compute.host)
    assert _versioned(memory) == ["instance.exists"]
    (exists,) = [s.message for s in memory.sent if s.topic == "versioned_notifications"]
    assert exists["payload"]["nova_object.data"]["uuid"] == instance.uuid
    assert "compute.instance.exists" in memory.events("notifications")


def test_first_start_sends_service_create(cloud: Cloud) -> None:
    memory = MemoryDriver()
    compute = cloud.compute()
    compute.host.notifier = Notifier(drivers=(memory,), notification_format="versioned").prepare(
        "nova-compute", compute.hostname
    )
    compute.start(background=False)
    assert _versioned(memory) == ["service.create"]
    data = memory.sent[0].message["payload"]["nova_object.data"]
    assert (data["host"], data["binary"]) == (compute.hostname, "nova-compute")


def test_state_changes_send_instance_update_when_asked(cloud: Cloud) -> None:
    compute = cloud.compute().start(background=False)
    memory = MemoryDriver()
    notifier = Notifier(drivers=(memory,), notification_format="versioned",
                        notify_on_state_change="vm_state")  # fmt: skip
    saves = SaveNotifier.of(notifier.prepare("nova-compute", "h"), "month", cloud.clock.now)
    compute.host.records = InstanceRecords(cloud.services.cell_dbs[CELL1_UUID], cloud.clock, saves)
    instance = cloud.instance(compute)
    build_and_run(compute.host, CTX, BuildAndRunInstance(instance.uuid))
    # Nova's send_update: every save sends; under vm_state only building -> active carries
    # two states, the task-state saves carry the current states on both sides
    events = _versioned(memory)
    assert len(events) > 1 and set(events) == {"instance.update"}
    changes = [
        sent.message["payload"]["nova_object.data"]["state_update"]["nova_object.data"]
        for sent in memory.sent
    ]
    moved = [c for c in changes if c["old_state"] != c["state"]]
    assert [(c["old_state"], c["state"]) for c in moved] == [("building", "active")]
    quiet = [c for c in changes if c["old_state"] == c["state"]]
    assert quiet and all(c["old_task_state"] == c["new_task_state"] for c in quiet)
    period = memory.sent[-1].message["payload"]["nova_object.data"]["audit_period"]
    # Nova's current period: from the end of the last completed month until now
    assert period["nova_object.data"]["audit_period_ending"].startswith(
        cloud.clock.now().strftime("%Y-%m-%d")
    )
