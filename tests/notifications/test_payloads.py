"""Every versioned notification the emitter builds, checked against Nova's sample for its
event type (tests/notifications/samples.py), plus the format and driver selection."""

from __future__ import annotations

import datetime
import logging
from dataclasses import replace
from typing import Any

import pytest

from openkeel.conf import make_config
from openkeel.domain.aggregates import Aggregate
from openkeel.domain.flavors import Flavor
from openkeel.domain.instances import FlavorSnapshot, Instance
from openkeel.domain.keypairs import KeyPair
from openkeel.domain.server_groups import ServerGroup
from openkeel.notifications.drivers import AmqpDriver, LogDriver, MemoryDriver, Sent
from openkeel.notifications.emitter import Notifier, notifier_from_conf
from openkeel.notifications.instance_payloads import Initiator, resize_prep_extra
from openkeel.notifications.versioned import ServiceStatus
from tests.notifications.samples import assert_matches

NOW = datetime.datetime(2026, 12, 4, 9, 30, 1)
WHO = Initiator("req-1", "demo-user", "demo-project")
FLAVOR = FlavorSnapshot("1", "m1.tiny", 512, 1, 1, extra_specs={"hw:watchdog_action": "x"}, id=1)
VIF = {
    "id": "port-1",
    "address": "fa:16:3e:4c:2c:30",
    "devname": "tapport-1",
    "meta": {},
    "network": {
        "label": "private",
        "subnets": [{"version": 4, "ips": [{"address": "10.0.0.2", "version": 4}]}],
    },
}
INSTANCE = Instance(
    uuid="178b0921-8f85-4257-88b6-2e743b5a975c",
    project_id="demo-project",
    user_id="demo-user",
    flavor=FLAVOR,
    display_name="vm",
    hostname="vm",
    image_ref="155d900f-4e14-4e4c-a73d-069cbf4541e6",
    vm_state="active",
    power_state=1,
    host="compute",
    node="fake-mini",
    reservation_id="r-1",
    availability_zone="nova",
    key_name="my-key",
    network_info=(VIF,),
    created_at=NOW,
    launched_at=NOW,
    updated_at=NOW,
    tags=("tag",),
    trusted_certs=("cert-1",),
)
KEYPAIR = KeyPair(1, "my-key", "demo-user", "1e:2c", "ssh-rsa AAAA", "ssh", NOW)


def _notifier() -> tuple[Notifier, MemoryDriver]:
    memory = MemoryDriver()
    notifier = Notifier(drivers=(memory,), notification_format="both",
                        notify_on_state_change="vm_and_task_state")  # fmt: skip
    return notifier.prepare("nova-compute", "compute"), memory


def _versioned(memory: MemoryDriver) -> list[dict[str, Any]]:
    return [dict(s.message) for s in memory.sent if s.topic == "versioned_notifications"]


def _check(memory: MemoryDriver) -> list[str]:
    sent = _versioned(memory)
    assert sent, "nothing was sent"
    for message in sent:
        assert_matches(message, message["event_type"].replace(".", "-"))
    return [m["event_type"] for m in sent]


def _failure() -> BaseException:
    try:
        raise ValueError("The created instance's disk would be too small.")
    except ValueError as exc:
        return exc


ACTIONS = [
    ("delete", ("start", "end")),
    ("shutdown", ("start", "end")),
    ("power_off", ("start", "end")),
    ("power_on", ("start", "end")),
    ("reboot", ("start", "end", "error")),
    ("pause", ("start", "end")),
    ("unpause", ("start", "end")),
    ("suspend", ("start", "end")),
    ("resume", ("start", "end")),
    ("rescue", ("start", "end")),
    ("unrescue", ("start", "end")),
    ("shelve", ("start", "end")),
    ("shelve_offload", ("start", "end")),
    ("unshelve", ("start", "end")),
    ("snapshot", ("start", "end")),
    ("soft_delete", ("start", "end")),
    ("restore", ("start", "end")),
    ("rebuild", ("start", "end", "error")),
    ("rebuild_scheduled", (None,)),
    ("resize_prep", ("start", "end")),
    ("resize", ("start", "end", "error")),
    ("resize_finish", ("start", "end")),
    ("resize_confirm", ("start", "end")),
    ("resize_revert", ("start", "end")),
    ("trigger_crash_dump", ("start", "end")),
    ("interface_attach", ("start", "end", "error")),
    ("interface_detach", ("start", "end")),
    ("volume_attach", ("start", "end", "error")),
    ("volume_detach", ("start", "end")),
    ("volume_swap", ("start", "end", "error")),
    ("live_migration_post", ("start", "end")),
    ("live_migration_post_dest", ("start", "end")),
    ("live_migration_pre", ("start", "end")),
    ("live_migration_rollback_dest", ("start", "end")),
    ("live_migration_rollback", ("start", "end")),
    ("live_migration_abort", ("start", "end")),
    ("live_migration_force_complete", ("start", "end")),
]
# Sent by another service than compute.
PUBLISHERS = {"rebuild_scheduled": "nova-conductor"}
EXTRA = {
    "volume_attach": {"volume_id": "a07f71dc-8151-4e7d-a0cc-cd24a3f11113"},
    "volume_detach": {"volume_id": "a07f71dc-8151-4e7d-a0cc-cd24a3f11113"},
    "volume_swap": {
        "old_volume_id": "a07f71dc-8151-4e7d-a0cc-cd24a3f11113",
        "new_volume_id": "227cc671-f30b-4488-96fd-7d0bf13648d8",
    },
    "rescue": {"rescue_image_ref": "a2459075-d96c-40d5-893e-577ff92e721c"},
    "snapshot": {"snapshot_image_id": "d2aae36f-785c-4518-8016-bc9534d9fc7f"},
}


@pytest.mark.parametrize(("action", "phases"), ACTIONS, ids=[a for a, _ in ACTIONS])
def test_instance_action_matches_sample(action: str, phases: tuple[str | None, ...]) -> None:
    notifier, memory = _notifier()
    binary = PUBLISHERS.get(action, "nova-compute")
    notifier = notifier.prepare(binary, "compute")
    extra = resize_prep_extra(FLAVOR) if action == "resize_prep" else EXTRA.get(action)
    for phase in phases:
        fault = _failure() if phase == "error" else None
        notifier.instance_action(INSTANCE, action, phase, WHO, fault=fault, extra=extra)
    assert _check(memory) == [f"instance.{action}.{p}" if p else f"instance.{action}" for p in phases]  # fmt: skip
    legacy = [s.message for s in memory.sent if s.topic == "notifications"]
    assert [m["publisher_id"] for m in legacy] == [f"{binary[5:]}.compute"] * len(phases)
    assert all(m["payload"]["instance_id"] == INSTANCE.uuid for m in legacy)


def test_instance_create_start_end_error() -> None:
    notifier, memory = _notifier()
    building = replace(INSTANCE, vm_state="building", power_state=0)
    notifier.instance_create(building, "start", WHO, instance_name="instance-00000001", keypairs=[KEYPAIR])  # fmt: skip
    notifier.instance_create(INSTANCE, "end", WHO, instance_name="instance-00000001")
    notifier.instance_create(building, "error", WHO, instance_name="i", fault=_failure())
    assert _check(memory) == ["instance.create.start", "instance.create.end", "instance.create.error"]  # fmt: skip
    error = _versioned(memory)[2]["payload"]["nova_object.data"]["fault"]["nova_object.data"]
    assert error["exception"] == "ValueError"
    assert error["function_name"] == "_failure"
    assert error["module_name"] == "tests.notifications.test_payloads"
    legacy = [s.message for s in memory.sent if s.topic == "notifications"]
    assert [m["event_type"] for m in legacy] == [
        "compute.instance.create.start", "compute.instance.create.end",
        "compute.instance.create.error",
    ]  # fmt: skip
    assert legacy[2]["priority"] == "ERROR"
    assert legacy[2]["payload"]["message"] == "The created instance's disk would be too small."


def test_instance_update_as_novas_send_update() -> None:
    notifier, memory = _notifier()
    period = (NOW - datetime.timedelta(days=3), NOW)
    notifier.instance_update(INSTANCE, INSTANCE, WHO, period)
    assert memory.sent == []  # nothing saved, nothing sent
    stopping = replace(INSTANCE, task_state="powering-off")
    notifier.instance_update(INSTANCE, stopping, WHO, period)
    assert _check(memory) == ["instance.update"]
    states = memory.sent[0].message["payload"]["nova_object.data"]["state_update"]
    assert states["nova_object.data"]["old_task_state"] is None
    assert states["nova_object.data"]["new_task_state"] == "powering-off"
    # vm_state only: a task state change is a plain update, the current states on both sides
    plain = MemoryDriver()
    vm_only = Notifier(drivers=(plain,), notification_format="both", notify_on_state_change="vm_state")  # fmt: skip
    vm_only.instance_update(INSTANCE, stopping, WHO, period)
    assert _check(plain) == ["instance.update"]
    states = plain.sent[0].message["payload"]["nova_object.data"]["state_update"]
    assert states["nova_object.data"]["old_task_state"] == "powering-off"
    assert plain.sent[1].message["payload"]["old_task_state"] == "powering-off"
    # notify_on_state_change unset: nothing at all, as Nova
    silent = MemoryDriver()
    Notifier(drivers=(silent,), notification_format="both").instance_update(INSTANCE, stopping, WHO, period)  # fmt: skip
    assert silent.sent == []


def test_instance_exists_and_compute_exception() -> None:
    notifier, memory = _notifier()
    notifier.instance_exists(INSTANCE, Initiator(), (NOW - datetime.timedelta(days=1), NOW))
    notifier.exception(_failure(), WHO)
    assert _check(memory) == ["instance.exists", "compute.exception"]
    exists = next(s.message for s in memory.sent if s.topic == "notifications")
    assert exists["event_type"] == "compute.instance.exists"


def emit_every_event(compute: Notifier, api: Notifier) -> int:
    """Every event type the emitter has, each phase once; how many versioned ones."""
    before = 0
    for action, phases in ACTIONS:
        extra = resize_prep_extra(FLAVOR) if action == "resize_prep" else EXTRA.get(action)
        for phase in phases:
            fault = _failure() if phase == "error" else None
            sender = compute.prepare(PUBLISHERS.get(action, "nova-compute"), compute.host)
            sender.instance_action(INSTANCE, action, phase, WHO, fault=fault, extra=extra)
            before += 1
    building = replace(INSTANCE, vm_state="building", power_state=0, task_state="scheduling")
    for phase in ("start", "end", "error"):
        fault = _failure() if phase == "error" else None
        compute.instance_create(building, phase, WHO, instance_name="instance-00000001", keypairs=[KEYPAIR], fault=fault)  # fmt: skip
    compute.instance_update(INSTANCE, replace(INSTANCE, task_state="powering-off"), WHO, (NOW, NOW))  # fmt: skip
    compute.instance_exists(INSTANCE, Initiator(), (NOW - datetime.timedelta(days=1), NOW))
    compute.exception(_failure(), WHO)
    api.instance_action(replace(INSTANCE, locked=True), "lock", None, WHO, legacy_too=False)
    api.instance_action(INSTANCE, "unlock", None, WHO, legacy_too=False)
    api.instance_action(INSTANCE, "evacuate", None, WHO, legacy_too=False)
    flavor = Flavor(1, "a22d5517", "test_flavor", 1024, 2, 10, 0, 0, 2.0, 0, False, True, None)
    api.flavor("create", flavor, projects=[])
    api.flavor("update", flavor)
    api.flavor("delete", flavor)
    for action in ("create", "import", "delete"):
        api.keypair(action, "start", KEYPAIR)
        api.keypair(action, "end", KEYPAIR)
    aggregate = Aggregate(1, "788608ec", "my-aggregate", ("compute",), {"availability_zone": "nova"})  # fmt: skip
    api.aggregate("create", "start", None, name="my-aggregate", metadata={})
    for action in ("create", "delete", "add_host", "remove_host", "update_metadata", "update_prop"):  # fmt: skip
        if action != "create":
            api.aggregate(action, "start", aggregate)
        api.aggregate(action, "end", aggregate)
    group = ServerGroup("788608ec", "group", "demo", "demo", "anti-affinity", {"max_server_per_host": 3})  # fmt: skip
    for action in ("create", "delete", "add_member"):
        api.server_group(action, group, members=["54238a20"])
    status = ServiceStatus("fa69c544", "host1", "nova-compute", "compute", 1, False, None, False, 70, NOW)  # fmt: skip
    compute.service("create", status)
    compute.service("update", status)
    return before + 6 + 3 + 3 + 6 + 12 + 3 + 2


def test_every_event_matches_its_sample() -> None:
    memory = MemoryDriver()
    notifier = Notifier(drivers=(memory,), notification_format="versioned",
                        notify_on_state_change="vm_and_task_state")  # fmt: skip
    count = emit_every_event(notifier.prepare("nova-compute", "compute"), notifier.prepare("nova-api", "api"))  # fmt: skip
    assert len(_check(memory)) == count
    assert {m["publisher_id"] for m in _versioned(memory)} == {"nova-api:api", "nova-compute:compute", "nova-conductor:compute"}  # fmt: skip


@pytest.mark.parametrize(
    ("fmt", "topics"),
    [
        ("unversioned", {"notifications"}),
        ("versioned", {"versioned_notifications"}),
        ("both", {"notifications", "versioned_notifications"}),
    ],
)
def test_notification_format_selects_topics(fmt: str, topics: set[str]) -> None:
    conf = make_config(overrides={"notifications.notification_format": fmt,
                                  "oslo_messaging_notifications.driver": ["test"]})  # fmt: skip
    notifier = notifier_from_conf(conf)
    notifier.instance_action(INSTANCE, "pause", "start", WHO)
    (memory,) = notifier.drivers
    assert isinstance(memory, MemoryDriver)
    assert {s.topic for s in memory.sent} == topics


def test_defaults_send_nothing_and_noop_is_nothing() -> None:
    assert make_config().notifications.notification_format == "unversioned"
    assert notifier_from_conf(make_config()).drivers == ()
    noop = make_config(overrides={"oslo_messaging_notifications.driver": ["noop"]})
    notifier = notifier_from_conf(noop)
    assert not notifier.versioned_enabled and not notifier.legacy_enabled


def test_driver_choice_follows_transport() -> None:
    inproc = make_config(overrides={"oslo_messaging_notifications.driver": ["messagingv2"]})
    assert isinstance(notifier_from_conf(inproc).drivers[0], LogDriver)
    rabbit = make_config(overrides={
        "oslo_messaging_notifications.driver": ["messagingv2"],
        "oslo_messaging_notifications.transport_url": "rabbit://u:p@127.0.0.1:5672/v",
    })  # fmt: skip
    driver = notifier_from_conf(rabbit).drivers[0]
    assert isinstance(driver, AmqpDriver)
    driver.close()


def test_log_driver_logs_the_message(caplog: pytest.LogCaptureFixture) -> None:
    notifier = Notifier(drivers=(LogDriver(),), notification_format="versioned")
    with caplog.at_level(logging.INFO, logger="oslo.messaging.notification"):
        notifier.exception(_failure())
    (record,) = [r for r in caplog.records if r.name == "oslo.messaging.notification.compute.exception"]  # fmt: skip
    assert record.levelname == "ERROR"
    assert '"event_type": "compute.exception"' in record.getMessage()


def test_a_failing_driver_never_raises(caplog: pytest.LogCaptureFixture) -> None:
    class Broken:
        def notify(self, *args: object) -> None:
            raise OSError("broker gone")

        def close(self) -> None:
            pass

    notifier = Notifier(drivers=(Broken(),), notification_format="both")
    notifier.instance_action(INSTANCE, "pause", "start", WHO)
    assert "could not be sent" in caplog.text


def test_memory_driver_records_topics() -> None:
    memory = MemoryDriver()
    memory.notify({}, {"event_type": "x"}, "INFO", ["a", "b"])
    assert memory.sent == [Sent("a", "info", {"event_type": "x"}, {}), Sent("b", "info", {"event_type": "x"}, {})]  # fmt: skip


def test_block_devices_and_shares_listed_only_when_asked() -> None:
    for asked, expected in ((False, None), (True, [])):
        memory = MemoryDriver()
        notifier = Notifier(drivers=(memory,), notification_format="versioned",
                            bdms_in_notifications=asked, include_share_mapping=asked)  # fmt: skip
        notifier.instance_action(INSTANCE, "pause", "start", WHO)
        data = memory.sent[0].message["payload"]["nova_object.data"]
        assert (data["block_devices"], data["shares"]) == (expected, expected)


SPEC = {
    "instance_uuid": INSTANCE.uuid,
    "num_instances": 1,
    "project_id": INSTANCE.project_id,
    "user_id": INSTANCE.user_id,
    "flavor": FLAVOR.to_primitive(),
    "image": {
        "id": "155d900f-4e14-4e4c-a73d-069cbf4541e6", "name": "cirros", "status": "active",
        "container_format": "bare", "disk_format": "qcow2", "size": 25165824,
        "min_disk": 0, "min_ram": 0, "visibility": "public", "protected": False, "tags": [],
        "created_at": "2026-12-04T09:30:01Z", "updated_at": "2026-12-04T09:30:01Z",
        "properties": {"hw_architecture": "x86_64"},
    },
    "security_groups": [{"name": "default"}],
    "scheduler_hints": {},
    "ignore_hosts": [],
}  # fmt: skip


def test_scheduling_notifications_match_novas_samples() -> None:
    """scheduler.select_destinations.start/end (RequestSpecPayload) and the conductor's
    compute_task.<method>.error (ComputeTaskPayload), both formats."""
    notifier, memory = _notifier()
    scheduler = notifier.prepare("nova-scheduler", "sched")
    scheduler.select_destinations(SPEC, "start", WHO)
    scheduler.select_destinations(SPEC, "end", WHO)
    conductor = notifier.prepare("nova-conductor", "cond")
    try:
        raise RuntimeError("No valid host was found. ")
    except RuntimeError as exc:
        failure = exc
    conductor.compute_task_error("build_instances", INSTANCE.uuid, SPEC, "error", failure, WHO)
    conductor.compute_task_error("migrate_server", INSTANCE.uuid, SPEC, "active", failure, WHO)
    conductor.compute_task_error("rebuild_server", INSTANCE.uuid, SPEC, "error", failure, WHO)
    assert _check(memory) == [
        "scheduler.select_destinations.start",
        "scheduler.select_destinations.end",
        "compute_task.build_instances.error",
        "compute_task.migrate_server.error",
        "compute_task.rebuild_server.error",
    ]
    start = _versioned(memory)[0]["payload"]["nova_object.data"]
    assert start["security_groups"] == ["default"] and start["instance_uuid"] == INSTANCE.uuid
    image = start["image"]["nova_object.data"]
    assert image["properties"]["nova_object.data"] == {"hw_architecture": "x86_64"}
    legacy = [s.message for s in memory.sent if s.topic == "notifications"]
    assert [m["event_type"] for m in legacy] == [
        "scheduler.select_destinations.start",
        "scheduler.select_destinations.end",
        "compute_task.build_instances",
        "compute_task.migrate_server",
        "compute_task.rebuild_server",
    ]
    assert legacy[2]["payload"]["state"] == "error" and legacy[2]["priority"] == "ERROR"
    assert legacy[0]["publisher_id"] == "scheduler.sched"
