"""PUT os-volume_attachments across the roles: Nova 34's swap (only while Cinder migrates the
old volume: the user-visible case, a volume once migrated, and Cinder's own migration, where
the ids swap), its rollback when the host fails, its 4xx; the 2.85 update of
delete_on_termination; the ``volume-extended`` and ``volume-reimaged`` events; Cinder's
assisted volume snapshots."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from openkeel.notifications.drivers import MemoryDriver
from openkeel.notifications.emitter import Notifier
from openkeel.volume.embedded.service import Caller, VolumeService
from tests.conformance import response_check
from tests.conformance.sample_catalog import load
from tests.conformance.test_samples import shape_diff
from tests.functional.conftest import Cloud
from tests.functional.test_volume_attachments import (
    _attach,
    _guest_volumes,
    _service,
    _status,
    _until,
    _volume,
)
from tests.notifications.samples import assert_matches

ADMIN = Caller("admin", "admin", True)


@pytest.fixture(autouse=True)
def conformant(cloud: Cloud) -> None:
    """Every response checked against Nova 34's response schemas."""
    original = cloud.api.request

    def checked(method: str, path: str, **kwargs: Any) -> httpx.Response:
        resp: httpx.Response = original(method, path, **kwargs)
        report = response_check.inspect(resp)
        assert not report.errors, f"{method} {path}: {report.errors}"
        return resp

    cloud.api.request = checked  # type: ignore[method-assign]


def _server_with_volume(cloud: Cloud, name: str, data: bytes = b"") -> tuple[str, str]:
    sid = cloud.boot(name)["id"]
    cloud.wait(sid)
    vid = _volume(cloud)
    if data:
        path = _service(cloud).files.path(vid)
        with path.open("r+b") as out:
            out.write(data)
    assert _attach(cloud, sid, vid).status_code == 200
    _until(lambda: _status(cloud, vid) == "in-use", "the volume to be attached")
    return sid, vid


def _migrating(service: VolumeService, vid: str, status: str) -> None:
    service.reset_status(ADMIN, "volumes", vid, {"migration_status": status})


def _swap(cloud: Cloud, sid: str, old: str, new: str, **kw: Any) -> httpx.Response:
    body = {"volumeAttachment": {"volumeId": new}}
    return cloud.api.put(f"/v2.1/servers/{sid}/os-volume_attachments/{old}", body, **kw)


def _listen(cloud: Cloud) -> MemoryDriver:
    memory = MemoryDriver()
    notifier = Notifier(drivers=(memory,), notification_format="versioned")
    for name, service in cloud.computes.items():
        service.host.notifier = notifier.prepare("nova-compute", name)
    return memory


def _swap_notices(memory: MemoryDriver) -> list[dict[str, Any]]:
    return [s.message for s in memory.sent if "volume_swap" in s.message["event_type"]]


def test_swap_of_a_volume_once_migrated(cloud: Cloud) -> None:
    """Cinder's user case: nothing migrates now; the guest's data moves to the new volume,
    the old one is available, the mapping names the new one at the same device."""
    sid, old = _server_with_volume(cloud, "swap-1", data=b"guest data")
    service = _service(cloud)
    _migrating(service, old, "success")
    new = _volume(cloud, size=2)
    memory = _listen(cloud)
    resp = _swap(cloud, sid, old, new)
    assert resp.status_code == 202 and resp.content == b""
    _until(
        lambda: cloud.events(sid, "swap_volume") == {"compute_swap_volume": "Success"},
        "the swap_volume",
    )
    assert _status(cloud, old) == "available" and service.attachments_of(old) == []
    assert _status(cloud, new) == "in-use"
    assert _guest_volumes(cloud, sid) == {new}
    assert service.files.path(new).read_bytes()[:10] == b"guest data"
    base = f"/v2.1/servers/{sid}/os-volume_attachments"
    (shown,) = cloud.api.get(base, version="2.89").json()["volumeAttachments"]
    assert shown["volumeId"] == new and shown["device"] == "/dev/vdb"
    assert shown["attachment_id"] == service.attachments_of(new)[0]["id"]
    sent = _swap_notices(memory)
    assert [m["event_type"] for m in sent] == ["instance.volume_swap.start", "instance.volume_swap.end"]  # fmt: skip
    for message in sent:
        assert_matches(message, message["event_type"].replace(".", "-"))
        data = message["payload"]["nova_object.data"]
        assert (data["old_volume_id"], data["new_volume_id"]) == (old, new)


def test_swap_while_cinder_migrates_keeps_the_old_id(cloud: Cloud) -> None:
    """Cinder's migration: the ids swap (the old id now holds the new volume's data and
    size), the target record goes, the mapping keeps the old id."""
    sid, old = _server_with_volume(cloud, "swap-2", data=b"moved")
    service = _service(cloud)
    _migrating(service, old, "migrating")
    new = _volume(cloud, size=3)
    assert _swap(cloud, sid, old, new).status_code == 202
    _until(
        lambda: cloud.events(sid, "swap_volume") == {"compute_swap_volume": "Success"},
        "the swap_volume",
    )
    assert _status(cloud, new) is None
    row = service.store.get("volumes", old)
    assert row is not None
    assert (row["status"], row["size"], row["migration_status"]) == ("in-use", 3, "success")
    assert service.files.path(old).read_bytes()[:5] == b"moved"
    assert [a["instance_uuid"] for a in service.attachments_of(old)] == [sid]
    assert _guest_volumes(cloud, sid) == {new}  # the guest has the target's disk
    (shown,) = cloud.api.get(f"/v2.1/servers/{sid}/os-volume_attachments").json()[
        "volumeAttachments"
    ]
    assert shown["volumeId"] == old


def test_a_failed_swap_rolls_back(cloud: Cloud) -> None:
    sid, old = _server_with_volume(cloud, "swap-3")
    service = _service(cloud)
    _migrating(service, old, "success")
    new = _volume(cloud)
    (compute,) = cloud.computes.values()

    def refuse(*_args: Any) -> None:
        raise RuntimeError("the block copy failed")

    compute.host.driver.swap_volume = refuse  # type: ignore[method-assign]
    memory = _listen(cloud)
    assert _swap(cloud, sid, old, new).status_code == 202
    _until(
        lambda: cloud.events(sid, "swap_volume") == {"compute_swap_volume": "Error"},
        "the swap_volume",
    )
    assert _status(cloud, old) == "in-use" and len(service.attachments_of(old)) == 1
    assert _status(cloud, new) == "available" and service.attachments_of(new) == []
    assert _guest_volumes(cloud, sid) == {old}
    listed = cloud.api.get(f"/v2.1/servers/{sid}/os-volume_attachments").json()
    assert [a["volumeId"] for a in listed["volumeAttachments"]] == [old]
    sent = _swap_notices(memory)
    assert [m["event_type"] for m in sent][-1] == "instance.volume_swap.error"
    assert_matches(sent[-1], "instance-volume_swap-error")


def test_swap_errors(cloud: Cloud) -> None:
    sid, old = _server_with_volume(cloud, "swap-4")
    service = _service(cloud)
    new = _volume(cloud)
    base = f"/v2.1/servers/{sid}/os-volume_attachments"
    not_migrating = _swap(cloud, sid, old, new)
    assert not_migrating.status_code == 409
    assert "should only be called by Cinder" in not_migrating.text
    user = _swap(cloud, sid, old, new, token="bob:admin")
    assert user.status_code == 403  # the swap is the admin's (and Cinder's)
    unknown = "6e1e2b57-7d5d-4b8b-9d59-3f4a1c2b9e10"
    assert _swap(cloud, sid, unknown, new).status_code == 404
    _migrating(service, old, "success")
    assert _swap(cloud, sid, old, unknown).status_code == 400  # named in the body
    smaller = _volume(cloud)
    service.store.update("volumes", old, {"size": 2})
    too_small = _swap(cloud, sid, old, smaller)
    assert too_small.status_code == 400 and "same size or larger" in too_small.text
    service.store.update("volumes", old, {"size": 1})
    other, busy = _server_with_volume(cloud, "swap-5")
    in_use = _swap(cloud, sid, old, busy)
    assert in_use.status_code == 400 and "must be detached" in in_use.text
    _migrating(service, busy, "success")
    elsewhere = _swap(cloud, sid, busy, new)
    assert elsewhere.status_code == 400 and "different instance" in elsewhere.text
    bad = cloud.api.put(f"{base}/{old}", {"volumeAttachment": {"volumeId": new, "tag": "x"}},
                        version="2.84")  # fmt: skip
    assert bad.status_code == 400  # only volumeId before 2.85
    assert cloud.api.post(f"/v2.1/servers/{sid}/action", {"os-stop": None}).status_code == 202
    cloud.wait(sid)
    stopped = _swap(cloud, sid, old, new)
    assert stopped.status_code == 409 and "vm_state stopped" in stopped.text
    # Nothing of the refused swaps stayed: both volumes as they were.
    assert (_status(cloud, old), _status(cloud, new)) == ("in-use", "available")
    assert service.attachments_of(new) == [] and other


def test_update_delete_on_termination_from_2_85(cloud: Cloud) -> None:
    sid, vid = _server_with_volume(cloud, "upd-1")
    url = f"/v2.1/servers/{sid}/os-volume_attachments/{vid}"

    def put(version: str = "2.85", **fields: Any) -> httpx.Response:
        body = {"volumeAttachment": {"volumeId": vid, **fields}}
        return cloud.api.put(url, body, version=version, token="bob:admin")

    sample = load("os-volume_attachments/v2.85/update-volume-attachment-delete-flag-req.json")
    sample["volumeAttachment"]["volumeId"] = vid
    assert cloud.api.put(url, sample, version="2.85", token="bob:admin").status_code == 202
    assert cloud.api.get(url, version="2.79").json()["volumeAttachment"]["delete_on_termination"]
    same = {"id": vid, "serverId": sid, "device": "/dev/vdb", "delete_on_termination": "no"}
    assert put(**same).status_code == 202
    assert not cloud.api.get(url, version="2.79").json()["volumeAttachment"]["delete_on_termination"]  # fmt: skip
    other = "6e1e2b57-7d5d-4b8b-9d59-3f4a1c2b9e10"
    for name, value in (("id", other), ("serverId", other), ("device", "/dev/vdz"), ("tag", "t")):
        resp = put(**{name: value})
        assert resp.status_code == 400, name
        assert f"The {name} property is not mutable" in resp.text
    assert put("2.84", delete_on_termination=True).status_code == 400  # not in 2.84's schema
    assert put("2.84").status_code == 403  # below 2.85 a PUT is a swap: the admin's
    unattached = _volume(cloud)
    missing = cloud.api.put(f"/v2.1/servers/{sid}/os-volume_attachments/{unattached}",
                            {"volumeAttachment": {"volumeId": unattached}}, version="2.85")  # fmt: skip
    assert missing.status_code == 404
    outsider = cloud.api.put(url, {"volumeAttachment": {"volumeId": vid}}, version="2.85",
                             token="eve:other")  # fmt: skip
    assert outsider.status_code == 404  # another project's server is not found


def _event(cloud: Cloud, sid: str, name: str, tag: str, version: str) -> httpx.Response:
    body = {"events": [{"name": name, "server_uuid": sid, "tag": tag}]}
    return cloud.api.post("/v2.1/os-server-external-events", body, version=version)


def test_volume_extended_reaches_the_driver(cloud: Cloud) -> None:
    sid, vid = _server_with_volume(cloud, "ext-1")
    service = _service(cloud)
    service.extend(ADMIN, vid, 4, in_use=True)
    resp = _event(cloud, sid, "volume-extended", vid, "2.51")
    assert resp.status_code == 200 and resp.json()["events"][0]["code"] == 200
    _until(
        lambda: cloud.events(sid, "extend_volume") == {"compute_extend_volume": "Success"},
        "the extend_volume",
    )
    (compute,) = cloud.computes.values()
    guest = compute.host.driver._guest(sid)  # type: ignore[attr-defined]
    assert guest.volume_sizes == {vid: 4 * 1024**3}
    assert _event(cloud, sid, "volume-extended", vid, "2.50").status_code == 400


def test_volume_extended_for_a_volume_not_attached_does_nothing(cloud: Cloud) -> None:
    sid, _vid = _server_with_volume(cloud, "ext-2")
    other = _volume(cloud)
    assert _event(cloud, sid, "volume-extended", other, "2.51").status_code == 200
    # The host logs and drops it, as Nova: the action has no event.
    _until(lambda: cloud.events(sid, "extend_volume", eventless=True) == {}, "the action")
    (compute,) = cloud.computes.values()
    assert compute.host.driver._guest(sid).volume_sizes == {}  # type: ignore[attr-defined]


def test_volume_reimaged_completes_a_waiting_rebuild(cloud: Cloud) -> None:
    sid, vid = _server_with_volume(cloud, "reimage-1")
    (compute,) = cloud.computes.values()
    waiter = compute.host.events.prepare(sid, "volume-reimaged", vid)
    assert _event(cloud, sid, "volume-reimaged", vid, "2.92").status_code == 400
    resp = _event(cloud, sid, "volume-reimaged", vid, "2.93")
    assert resp.status_code == 200
    arrived = waiter.wait(30)
    assert (arrived.name, arrived.tag, arrived.status) == ("volume-reimaged", vid, "completed")


def test_assisted_volume_snapshots(cloud: Cloud) -> None:
    sid, vid = _server_with_volume(cloud, "avs-1")
    (compute,) = cloud.computes.values()
    guest = compute.host.driver._guest(sid)  # type: ignore[attr-defined]
    body = load("os-assisted-volume-snapshots/snapshot-create-assisted-req.json")
    body["snapshot"]["volume_id"] = vid
    info = body["snapshot"]["create_info"]
    created = cloud.api.post("/v2.1/os-assisted-volume-snapshots", body)
    assert created.status_code == 200, created.text
    assert created.json() == {"snapshot": {"id": info["id"], "volumeId": vid}}
    sample = load("os-assisted-volume-snapshots/snapshot-create-assisted-resp.json")
    assert shape_diff(created.json(), sample) == []
    _until(lambda: guest.volume_snapshots.get(vid) == [info["snapshot_id"]], "the host's snapshot")
    delete_info = json.dumps({"volume_id": vid, "type": "qcow2"})
    url = f"/v2.1/os-assisted-volume-snapshots/{info['snapshot_id']}"
    deleted = cloud.api.delete(url, params={"delete_info": delete_info})
    assert deleted.status_code == 204
    _until(lambda: guest.volume_snapshots.get(vid) == [], "the host's delete")


def test_assisted_volume_snapshot_errors(cloud: Cloud) -> None:
    sid, vid = _server_with_volume(cloud, "avs-2")
    info = {"snapshot_id": "s", "type": "qcow2", "new_file": "f"}
    url = "/v2.1/os-assisted-volume-snapshots"
    unknown = cloud.api.post(url, {"snapshot": {"volume_id": "nope", "create_info": info}})
    assert unknown.status_code == 400 and "No volume Block Device Mapping" in unknown.text
    body = {"snapshot": {"volume_id": vid, "create_info": {**info, "type": "raw"}}}
    assert cloud.api.post(url, body).status_code == 400
    user = cloud.api.post(url, {"snapshot": {"volume_id": vid, "create_info": info}},
                          token="bob:admin")  # fmt: skip
    assert user.status_code == 403
    assert cloud.api.delete(f"{url}/s").status_code == 400  # no delete_info
    broken = cloud.api.delete(f"{url}/s", params={"delete_info": "{"})
    assert broken.status_code == 400
    extra = {"delete_info": json.dumps({"volume_id": vid}), "other": "1"}
    assert cloud.api.delete(f"{url}/s", params=extra, version="2.74").status_code == 204
    assert cloud.api.delete(f"{url}/s", params=extra, version="2.75").status_code == 400
    assert cloud.api.post(f"/v2.1/servers/{sid}/action", {"os-stop": None}).status_code == 202
    cloud.wait(sid)
    merging = {"delete_info": json.dumps({"volume_id": vid, "merge_target_file": "f"})}
    stopped = cloud.api.delete(f"{url}/s", params=merging)
    assert stopped.status_code == 400 and "vm_state stopped" in stopped.text
