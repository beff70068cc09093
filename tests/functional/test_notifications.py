"""Notifications of a whole cloud: a live migration notifies on both hosts as Nova's
(``live_migration_pre`` and ``live_migration_post_dest`` on the destination,
``live_migration_post`` on the source; a rollback ``live_migration_rollback`` on the source and
``live_migration_rollback_dest`` on the destination), each matching Nova's sample; an
evacuation sends instance.evacuate from the destination; the API's and the conductor's
instance saves send instance.update as Nova's ``Instance.save``."""

from __future__ import annotations

from typing import Any

from openkeel.notifications.drivers import MemoryDriver
from openkeel.notifications.emitter import Notifier
from tests.functional.conftest import Cloud
from tests.functional.test_evacuate import _evacuate, _force_down
from tests.functional.test_live_migration import (
    ADMIN,
    _add_gated,
    _booted,
    _host,
    _live,
    _on_host,
    _wait_migration,
)
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
        ("instance.live_migration_pre.start", f"nova-compute:{dest}"),
        ("instance.live_migration_pre.end", f"nova-compute:{dest}"),
        ("instance.live_migration_post.start", f"nova-compute:{source}"),
        ("instance.live_migration_post.end", f"nova-compute:{source}"),
        ("instance.live_migration_post_dest.start", f"nova-compute:{dest}"),
        ("instance.live_migration_post_dest.end", f"nova-compute:{dest}"),
    }


def test_live_migration_rollback_notifies_on_the_destination(cloud: Cloud) -> None:
    gated_host, gated = _add_gated(cloud)
    target = cloud.add_compute().host.host
    server_id = _on_host(cloud, gated_host)
    memory = MemoryDriver()
    _listen(cloud, memory)
    _live(cloud, server_id, {"host": target, "block_migration": "auto", "force": True}, "2.30")
    assert gated.reported.wait(30)
    running = _wait_migration(cloud, server_id, "running")
    url = f"/v2.1/servers/{server_id}/migrations/{running['id']}"
    assert cloud.api.delete(url, version="2.24", token=ADMIN).status_code == 202
    _wait_migration(cloud, server_id, "cancelled")
    _until(
        lambda: any(
            s.message["event_type"] == "instance.live_migration_rollback_dest.end"
            for s in memory.sent
        ),
        "the destination's rollback notification",
    )
    sent = [s.message for s in memory.sent]
    for message in sent:
        assert_matches(message, message["event_type"].replace(".", "-"))
    order = [(m["event_type"], m["publisher_id"]) for m in sent]
    assert order[:2] == [
        ("instance.live_migration_pre.start", f"nova-compute:{target}"),
        ("instance.live_migration_pre.end", f"nova-compute:{target}"),
    ]
    assert set(order[2:]) >= {
        ("instance.live_migration_rollback.start", f"nova-compute:{gated_host}"),
        ("instance.live_migration_rollback.end", f"nova-compute:{gated_host}"),
        ("instance.live_migration_rollback_dest.start", f"nova-compute:{target}"),
        ("instance.live_migration_rollback_dest.end", f"nova-compute:{target}"),
    }


def _updates(memory: MemoryDriver) -> list[dict[str, Any]]:
    return [dict(s.message) for s in memory.sent if s.message["event_type"] == "instance.update"]


def test_api_saves_send_instance_update(cloud: Cloud) -> None:
    """The API setting an action's task state (stop, then rename) sends instance.update as
    Nova's Instance.save in nova-api: publisher nova-compute:<the API's host>, the request's
    user as initiator; the rename carries old_display_name."""
    sid = cloud.boot("upd-1")["id"]
    assert cloud.wait(sid)["status"] == "ACTIVE"
    memory = MemoryDriver()
    notifier = Notifier(drivers=(memory,), notification_format="both",
                        notify_on_state_change="vm_and_task_state")  # fmt: skip
    cloud.services.notifier = notifier.prepare("nova-api", "api-host")
    assert cloud.api.post(f"/v2.1/servers/{sid}/action", {"os-stop": None}).status_code == 202
    renamed = cloud.api.put(f"/v2.1/servers/{sid}", {"server": {"name": "upd-2"}})
    assert renamed.status_code == 200, renamed.text
    updates = _updates(memory)
    versioned = [u for u in updates if "nova_object.data" in u["payload"]]
    legacy = [u for u in memory.sent if u.message["event_type"] == "compute.instance.update"]
    assert len(versioned) == 2 and len(legacy) == 2
    for message in versioned:
        assert_matches(message, "instance-update")
        assert message["publisher_id"] == "nova-compute:api-host"
        assert message["payload"]["nova_object.data"]["action_initiator_user"] is not None
    stop = versioned[0]["payload"]["nova_object.data"]["state_update"]["nova_object.data"]
    assert (stop["old_task_state"], stop["new_task_state"]) == (None, "powering-off")
    rename = versioned[1]["payload"]["nova_object.data"]
    assert (rename["old_display_name"], rename["display_name"]) == ("upd-1", "upd-2")
    assert legacy[0].message["publisher_id"] == "compute.api-host"
    assert legacy[0].message["payload"]["new_task_state"] == "powering-off"


def test_server_tags_send_instance_update_from_the_api(cloud: Cloud) -> None:
    """Nova's server tags API sends instance.update with the tags, publisher nova-api, even
    without notify_on_state_change."""
    sid = cloud.boot("tagged")["id"]
    assert cloud.wait(sid)["status"] == "ACTIVE"
    memory = MemoryDriver()
    notifier = Notifier(drivers=(memory,), notification_format="versioned")
    cloud.services.notifier = notifier.prepare("nova-api", "api-host")
    answer = cloud.api.put(f"/v2.1/servers/{sid}/tags/some-tag", None, version="2.26")
    assert answer.status_code == 201, answer.text
    (update,) = _updates(memory)
    assert_matches(update, "instance-update-tags-action")
    assert update["publisher_id"] == "nova-api:api-host"
    assert update["payload"]["nova_object.data"]["tags"] == ["some-tag"]


def test_conductor_saves_send_instance_update(cloud: Cloud) -> None:
    """A live migration nobody can host: the conductor puts the task state back and Nova's
    save notifies from the conductor's host."""
    server_id, _source = _booted(cloud)
    memory = MemoryDriver()
    _listen(cloud, memory)
    conductor = cloud.roles.conductor
    assert conductor is not None
    notifier = Notifier(drivers=(memory,), notification_format="versioned",
                        notify_on_state_change="vm_and_task_state")  # fmt: skip
    conductor.deps.notifier = notifier.prepare("nova-conductor", "conductor-host")
    _live(cloud, server_id, {"host": None, "block_migration": "auto"}, "2.68")
    _wait_migration(cloud, server_id, "error")
    _until(lambda: bool(_updates(memory)), "the conductor's instance.update")
    (update,) = _updates(memory)
    assert_matches(update, "instance-update")
    assert update["publisher_id"] == "nova-compute:conductor-host"
    states = update["payload"]["nova_object.data"]["state_update"]["nova_object.data"]
    assert (states["old_task_state"], states["new_task_state"]) == ("migrating", None)


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
    # ACTIVE is saved before rebuild.end is sent, and on RabbitMQ it arrives later still
    _until(lambda: len(memory.sent) >= 4, "the rebuild's end notification")
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
