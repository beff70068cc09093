"""createImage and createBackup across every role, on both transports: the API registers a
queued image; the server's host copies the root disk (simulated driver: a small raw disk),
uploads it into the embedded image catalog, which makes it active; the server keeps its state.
Backups rotate; a failure deletes the image and clears the task; a compute role killed midway
leaves no task state behind; the snapshot boots."""

from __future__ import annotations

import hashlib
import time
import uuid
from pathlib import Path
from typing import Any

from openkeel.clients.image import Caller, Image
from openkeel.db.image_catalog import EmbeddedImageCatalog
from openkeel.db.image_files import ImageFiles
from openkeel.db.repositories import instance_faults
from openkeel.virt.errors import PermanentDriverError
from openkeel.virt.fake import SIMULATED_DISK_BYTES, simulated_disk
from tests.conftest import CELL1_UUID
from tests.functional.conftest import IMAGE, Cloud, Gate

ADMIN = Caller("admin", is_admin=True)


def _act(cloud: Cloud, sid: str, body: dict[str, Any], version: str = "2.45") -> Any:
    return cloud.api.post(f"/v2.1/servers/{sid}/action", body, version=version)


def _image(cloud: Cloud, image_id: str) -> Image:
    return EmbeddedImageCatalog(cloud.services.api_db).get(ADMIN, image_id)


def _backups(cloud: Cloud, sid: str, backup_type: str) -> list[str]:
    """Names of the server's backups of the type, oldest first (as tempest lists them)."""
    filters = {"instance_uuid": sid, "backup_type": backup_type}
    catalog = EmbeddedImageCatalog(cloud.services.api_db)
    return [i.name or "" for i in catalog.list(ADMIN, filters, sort=(("created_at", "asc"),))]


def _finished(cloud: Cloud, sid: str, request_id: str) -> None:
    """Wait until the action of ``request_id`` has no running event (the task state clears
    before a backup's rotation, as in Nova)."""
    url = f"/v2.1/servers/{sid}/os-instance-actions/{request_id}"
    deadline = time.monotonic() + 30
    while True:
        events = cloud.api.get(url).json()["instanceAction"]["events"]
        if events and all(e["result"] is not None for e in events):
            assert [e["result"] for e in events] == ["Success"], events
            return
        assert time.monotonic() < deadline, events
        time.sleep(0.05)  # polling real asynchrony (RPC casts), bounded by the deadline


def _active(cloud: Cloud, name: str) -> tuple[str, dict[str, Any]]:
    sid = cloud.boot(name)["id"]
    server = cloud.wait(sid)
    assert server["status"] == "ACTIVE"
    return sid, server


def test_create_image_uploads_the_root_disk_and_the_snapshot_boots(cloud: Cloud) -> None:
    sid, _ = _active(cloud, "s-1")
    (service,) = cloud.computes.values()
    seen: list[str | None] = []
    original = service.host.driver.snapshot

    def snapshot(ref: Any, target: Any, update: Any) -> Any:
        def recorded(new: Any, old: Any) -> None:
            update(new, old)
            seen.append(service.host.records.get(sid).task_state)

        seen.append(service.host.records.get(sid).task_state)
        return original(ref, target, recorded)

    service.host.driver.snapshot = snapshot  # type: ignore[method-assign]
    resp = _act(cloud, sid, {"createImage": {"name": "snap-1", "metadata": {"k": "v"}}})
    assert resp.status_code == 202, resp.text
    image_id = resp.json()["image_id"]
    server = cloud.wait(sid)
    assert (server["status"], server["OS-EXT-STS:power_state"]) == ("ACTIVE", 1)
    assert seen == ["image_snapshot", "image_pending_upload", "image_uploading"]
    assert cloud.events(sid, "createImage") == {"compute_snapshot_instance": "Success"}

    image = _image(cloud, image_id)
    spec = service.host.driver._guest(sid).spec  # type: ignore[attr-defined]
    data = simulated_disk(spec, image_id)
    assert (image.status, image.disk_format, image.container_format) == ("active", "raw", "bare")
    assert (image.size, image.checksum) == (SIMULATED_DISK_BYTES, hashlib.md5(data).hexdigest())
    assert image.properties["image_type"] == "snapshot" and image.properties["k"] == "v"
    files = ImageFiles(Path(cloud.services.conf.state_path) / "images")
    assert b"".join(files.read(image_id)) == data
    # the compute API's proxy shows it, and a server boots from it
    shown = cloud.api.get(f"/v2.1/images/{image_id}").json()["image"]
    assert (shown["status"], shown["metadata"]["instance_uuid"]) == ("ACTIVE", sid)
    booted = cloud.boot("from-snap", imageRef=image_id)["id"]
    again = cloud.wait(booted)
    assert (again["status"], again["image"]["id"]) == ("ACTIVE", image_id)


def test_snapshot_of_a_stopped_server_leaves_it_stopped(cloud: Cloud) -> None:
    sid, _ = _active(cloud, "s-2")
    assert cloud.api.post(f"/v2.1/servers/{sid}/action", {"os-stop": None}).status_code == 202
    assert cloud.wait(sid)["status"] == "SHUTOFF"
    image_id = _act(cloud, sid, {"createImage": {"name": "cold"}}).json()["image_id"]
    server = cloud.wait(sid)
    assert (server["status"], server["OS-EXT-STS:power_state"]) == ("SHUTOFF", 4)
    assert _image(cloud, image_id).status == "active"


def test_a_failed_snapshot_deletes_the_image_and_keeps_the_server(cloud: Cloud) -> None:
    sid, _ = _active(cloud, "s-3")
    (service,) = cloud.computes.values()

    def broken(_ref: Any, _target: Any, update: Any) -> Any:
        update(*_pending())
        raise PermanentDriverError("root disk unreadable")

    service.host.driver.snapshot = broken  # type: ignore[method-assign, assignment]
    resp = _act(cloud, sid, {"createImage": {"name": "doomed"}})
    assert resp.status_code == 202, resp.text
    server = cloud.wait(sid)
    assert (server["status"], server["OS-EXT-STS:task_state"]) == ("ACTIVE", None)
    assert cloud.events(sid, "createImage") == {"compute_snapshot_instance": "Error"}
    assert [i.id for i in EmbeddedImageCatalog(cloud.services.api_db).list(ADMIN, {})] == [IMAGE]
    with cloud.services.cell_dbs[CELL1_UUID].connect() as conn:
        (fault,) = instance_faults.list_for_instance(conn, sid)
    assert (fault.code, fault.message) == (500, "root disk unreadable")
    # the server takes a new snapshot afterwards
    service.host.driver.snapshot = type(service.host.driver).snapshot.__get__(service.host.driver)  # type: ignore[method-assign]
    assert _act(cloud, sid, {"createImage": {"name": "again"}}).status_code == 202
    assert cloud.wait(sid)["OS-EXT-STS:task_state"] is None


def _pending() -> tuple[Any, Any]:
    from openkeel.domain.states import TaskState

    return TaskState.IMAGE_PENDING_UPLOAD, None


def test_backups_rotate_per_type(cloud: Cloud) -> None:
    sid, _ = _active(cloud, "s-4")

    def backup(name: str, backup_type: str, rotation: int) -> str:
        body = {"createBackup": {"name": name, "backup_type": backup_type, "rotation": rotation}}
        resp = _act(cloud, sid, body)
        assert resp.status_code == 202, resp.text
        assert cloud.wait(sid)["OS-EXT-STS:task_state"] is None
        _finished(cloud, sid, resp.headers["x-openstack-request-id"])  # the rotation too
        image_id: str = resp.json()["image_id"]
        return image_id

    first = backup("d1", "daily", 2)
    assert _image(cloud, first).properties["backup_type"] == "daily"
    backup("w1", "weekly", 1)
    backup("d2", "daily", 2)
    # In the order they were made, even within one second (tempest's test_create_backup).
    assert _backups(cloud, sid, "daily") == ["d1", "d2"]
    backup("d3", "daily", 1)  # keeps only the newest daily one
    assert _backups(cloud, sid, "daily") == ["d3"]
    assert _backups(cloud, sid, "weekly") == ["w1"]
    backup("w2", "weekly", 0)  # rotation 0: Nova keeps none, the new one included
    assert _backups(cloud, sid, "weekly") == []


def test_compute_killed_mid_snapshot_leaves_no_task_state(cloud: Cloud) -> None:
    gate = Gate()
    cloud.gates.append(gate)
    phoenix = f"phoenix-{uuid.uuid4().hex[:6]}"
    (first,) = list(cloud.computes)
    listed = cloud.api.get(f"/v2.1/os-services?host={first}", version="2.53").json()
    disable = {"status": "disabled", "disabled_reason": "out of the way"}
    url = f"/v2.1/os-services/{listed['services'][0]['id']}"
    assert cloud.api.put(url, disable, version="2.53").status_code == 200
    stuck = cloud.add_compute(phoenix, delays={"snapshot": 1.0}, sleep=gate.sleep_once)
    sid, _ = _active(cloud, "s-5")
    assert _act(cloud, sid, {"createImage": {"name": "lost"}}).status_code == 202
    assert gate.entered.wait(30), "the snapshot never reached the driver"
    stuck.stop(drain=False)  # the compute role dies mid-snapshot
    cloud.computes.pop(phoenix)
    cloud.roles.computes.remove(stuck)
    shown = cloud.api.get(f"/v2.1/servers/{sid}", version="2.1").json()["server"]
    assert shown["OS-EXT-STS:task_state"] == "image_snapshot"

    # restarted over the same hypervisor (its guests kept): clears the task state, as Nova
    cloud.add_compute(phoenix, driver=stuck.host.driver)  # type: ignore[arg-type]
    server = cloud.wait(sid)
    assert (server["status"], server["OS-EXT-STS:task_state"]) == ("ACTIVE", None)
    resp = _act(cloud, sid, {"createImage": {"name": "after"}})
    assert resp.status_code == 202
    assert cloud.wait(sid)["OS-EXT-STS:task_state"] is None
    assert _image(cloud, resp.json()["image_id"]).status == "active"
    gate.release()
