"""Notifications of a whole cloud: a live migration notifies on both hosts as Nova's
(``live_migration_post`` on the source, ``live_migration_post_dest`` on the destination), each
matching Nova's sample; an evacuation sends instance.evacuate from the destination."""

from __future__ import annotations

from openkeel.notifications.drivers import MemoryDriver
from openkeel.notifications.emitter import Notifier
from tests.functional.conftest import Cloud
from tests.functional.test_evacuate import _evacuate, _force_down
from tests.functional.test_live_migration import _booted, _host, _live, _wait_migration
from tests.functional.test_volume_attachments import _attach, _status, _until, _volume
from tests.notifications.samples import assert_matches


def _listen(cloud: Cloud, memory: MemoryDriver) -> None:
    notifier = Notifier(drivers=(memory,), notification_format="versioned")
    for name, service in cloud.computes.items():
        service.host.notifier = notifier.prepare("nova-compute", name)
    conductor = cloud.roles.conductor
    assert conductor is not None
    conductor.deps.notifier = notifier.prepare("nova-conductor", "conductor")


def test_live_migration_notifies_on_source_and_destination(cloud: Cloud) -> None:
    server_id, source = _booted(cloud)
    cloud.add_compute()
    memory = MemoryDriver()
    _listen(cloud, memory)
    _live(cloud, server_id, {"host": None, "block_migration": "auto"}, "2.25")
    _wait_migration(cloud, server_id, "completed")
    dest = _host(cloud.wait(server_id))
    sent = [s.message for s in memory.sent]
    for message in sent:
        assert_matches(message, message["event_type"].replace(".", "-"))
    by_publisher = {(m["event_type"], m["publisher_id"]) for m in sent}
    assert by_publisher >= {
        ("instance.live_migration_post.start", f"nova-compute:{source}"),
        ("instance.live_migration_post.end", f"nova-compute:{source}"),
        ("instance.live_migration_post_dest.start", f"nova-compute:{dest}"),
        ("instance.live_migration_post_dest.end", f"nova-compute:{dest}"),
    }


def test_evacuation_notifies_from_the_destination(cloud: Cloud) -> None:
    (source_host,) = cloud.computes
    target = cloud.add_compute()
    sid = cloud.boot("ev-1", availability_zone=f"nova:{source_host}")["id"]
    cloud.wait(sid)
    memory = MemoryDriver()
    _listen(cloud, memory)
    cloud.computes[source_host].stop()
    _force_down(cloud, source_host)
    assert _evacuate(cloud, sid, {}).status_code == 200
    assert cloud.wait(sid)["status"] == "ACTIVE"
    sent = [s.message for s in memory.sent]
    for message in sent:
        assert_matches(message, message["event_type"].replace(".", "-"))
    assert [(m["event_type"], m["publisher_id"]) for m in sent] == [
        ("instance.rebuild_scheduled", "nova-conductor:conductor"),
        ("instance.rebuild.start", f"nova-compute:{target.hostname}"),
        ("instance.evacuate", f"nova-api:{target.hostname}"),
        ("instance.rebuild.end", f"nova-compute:{target.hostname}"),
    ]


def test_volume_attach_and_detach_notify(cloud: Cloud) -> None:
    sid = cloud.boot("vol-1")["id"]
    assert cloud.wait(sid)["status"] == "ACTIVE"
    memory = MemoryDriver()
    _listen(cloud, memory)
    vid = _volume(cloud)
    assert _attach(cloud, sid, vid).status_code == 200
    _until(lambda: _status(cloud, vid) == "in-use", "the volume to be in use")
    assert cloud.api.delete(f"/v2.1/servers/{sid}/os-volume_attachments/{vid}").status_code == 202
    _until(lambda: _status(cloud, vid) == "available", "the volume to be detached")
    _until(lambda: len(memory.sent) == 4, "the detach's end notification")
    sent = [s.message for s in memory.sent]
    for message in sent:
        assert_matches(message, message["event_type"].replace(".", "-"))
        assert message["payload"]["nova_object.data"]["volume_id"] == vid
    assert [m["event_type"] for m in sent] == [
        "instance.volume_attach.start", "instance.volume_attach.end",
        "instance.volume_detach.start", "instance.volume_detach.end",
    ]  # fmt: skip


def test_a_boot_nobody_can_host_notifies_the_scheduler_and_the_conductor(cloud: Cloud) -> None:
    """scheduler.select_destinations.start (no end: it failed) from the scheduler, then
    compute_task.build_instances.error from the conductor, each matching Nova's sample."""
    memory = MemoryDriver()
    _listen(cloud, memory)
    scheduler = cloud.roles.scheduler
    assert scheduler is not None
    notifier = Notifier(drivers=(memory,), notification_format="versioned")
    scheduler.endpoint.notifier = notifier.prepare("nova-scheduler", "scheduler")
    flavor = {"flavor": {"name": "nowhere", "ram": 512, "vcpus": 1, "disk": 1}}
    flavor_id = cloud.api.post("/v2.1/flavors", flavor).json()["flavor"]["id"]
    specs = {"extra_specs": {"trait:CUSTOM_NO_HOST_HAS_THIS": "required"}}
    assert cloud.api.post(f"/v2.1/flavors/{flavor_id}/os-extra_specs", specs).status_code == 200
    sid = cloud.boot("nowhere", flavor=flavor_id)["id"]
    assert cloud.wait(sid)["status"] == "ERROR"
    _until(lambda: len(memory.sent) >= 2, "the conductor's error notification")
    sent = [s.message for s in memory.sent]
    for message in sent:
        assert_matches(message, message["event_type"].replace(".", "-"))
    assert [(m["event_type"], m["publisher_id"]) for m in sent] == [
        ("scheduler.select_destinations.start", "nova-scheduler:scheduler"),
        ("compute_task.build_instances.error", "nova-conductor:conductor"),
    ]
    payload = sent[1]["payload"]["nova_object.data"]
    assert payload["instance_uuid"] == sid and payload["state"] == "error"
    assert payload["reason"]["nova_object.data"]["exception"] == "NoValidHost"
