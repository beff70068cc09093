"""Rebuild of a volume-backed server with a new image (2.93) through every role, on both
transports: the API's checks, the host re-reserving the root volume, the embedded volume
service reimaging it and reporting ``volume-reimaged`` to the compute API (as Cinder does),
the host attaching it again and defining the guest on it. A reimage that fails, an event that
never comes and a delete during the wait leave a fault (or nothing) and no attachment behind.
What tempest's ServerActionsV293TestJSON.test_rebuild_volume_backed_server checks is checked
here too: ``image`` stays ``""``, the volume keeps its id and shows the new image."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from openkeel.api.policy import PolicyEnforcer
from openkeel.api.usecases.images import image_service
from openkeel.clients.image import Image
from openkeel.cmd.volume import nova_events
from openkeel.db.image_catalog import EmbeddedImageCatalog
from openkeel.volume.embedded.adapter import EmbeddedVolumes
from openkeel.volume.embedded.service import Caller, ImageCopy, NovaEvents, VolumeService
from openkeel.volume.factory import get_volume_adapter, provide_images, send_volume_events
from tests.functional.conftest import IMAGE, Cloud

ADMIN = Caller("admin", "admin", True)
ALT = "3d2a4c2e-6a55-4a3b-9d41-0a1f6b2f7a01"
BROKEN = "3d2a4c2e-6a55-4a3b-9d41-0a1f6b2f7a02"  # its data cannot be read
BIG = "3d2a4c2e-6a55-4a3b-9d41-0a1f6b2f7a03"  # min_disk 5
HUNGRY = "3d2a4c2e-6a55-4a3b-9d41-0a1f6b2f7a04"  # min_ram beyond the flavor's
DATA = {IMAGE: b"", ALT: b"the alternative image", BIG: b"", HUNGRY: b""}


def _unreadable() -> Iterator[bytes]:
    yield b"half"
    raise OSError("the image store went away")


@dataclass
class EventLine:
    """The volume service's line to the compute API; ``held`` drops what it would send."""

    send: NovaEvents
    held: bool = False
    sent: list[tuple[str, str, str]] = field(default_factory=list)

    def __call__(self, server_uuid: str, name: str, tag: str) -> None:
        self.sent.append((server_uuid, name, tag))
        if not self.held:
            self.send(server_uuid, name, tag)


@pytest.fixture(autouse=True)
def line(cloud: Cloud) -> EventLine:
    """The all-in-one's wiring: images for the volume service, its events to the API."""
    catalog = image_service(cloud.services)  # the API's (the host's reads the same rows)
    assert isinstance(catalog, EmbeddedImageCatalog)
    for image_id, extra in ((ALT, {}), (BROKEN, {}), (BIG, {"min_disk": 5}),
                            (HUNGRY, {"min_ram": 1 << 20})):  # fmt: skip
        catalog.add(Image(image_id, f"image-{image_id[-2:]}", "active", size=1 << 20,
                          container_format="bare", disk_format="raw", **extra))  # fmt: skip

    def fetch(caller: Caller, image_id: str) -> ImageCopy | None:
        if image_id == BROKEN:
            return ImageCopy(_unreadable(), 8, 0, {"image_id": image_id})
        if image_id not in DATA:
            return None
        return ImageCopy(iter([DATA[image_id]]), len(DATA[image_id]), 0,
                         {"image_id": image_id, "image_name": image_id[-2:]})  # fmt: skip

    conf, api_db = cloud.services.conf, cloud.services.api_db
    provide_images(conf, api_db, fetch)
    made = EventLine(nova_events(cloud.services, PolicyEnforcer(conf)))
    send_volume_events(conf, api_db, made)
    return made


@pytest.fixture
def per_gb(cloud: Cloud) -> Iterator[Any]:
    """Set ``[DEFAULT] reimage_timeout_per_gb`` for the test."""
    conf = cloud.services.conf
    yield lambda seconds: conf.set_override("reimage_timeout_per_gb", seconds)
    conf.clear_override("reimage_timeout_per_gb")


def _service(cloud: Cloud) -> VolumeService:
    adapter = get_volume_adapter(cloud.services.conf, cloud.services.api_db)
    assert isinstance(adapter, EmbeddedVolumes)
    return adapter.service


def _boot(cloud: Cloud) -> tuple[str, str]:
    """A server on a 1 GB root volume made from IMAGE (deleted with the server)."""
    bdm = {"source_type": "image", "destination_type": "volume", "uuid": IMAGE,
           "boot_index": 0, "volume_size": 1, "delete_on_termination": True}  # fmt: skip
    server = {"name": "vb", "flavorRef": "1", "networks": "none", "block_device_mapping_v2": [bdm]}
    resp = cloud.api.post("/v2.1/servers", {"server": server}, version="2.79")
    assert resp.status_code == 202, resp.text
    sid = resp.json()["server"]["id"]
    shown = cloud.wait(sid)
    assert shown["status"] == "ACTIVE", shown.get("fault")
    return sid, shown["os-extended-volumes:volumes_attached"][0]["id"]


def _rebuild(cloud: Cloud, sid: str, image: str, version: str = "2.93", **extra: Any) -> Any:
    body = {"rebuild": {"imageRef": image, **extra}}
    return cloud.api.post(f"/v2.1/servers/{sid}/action", body, version=version)


def _attachment_ids(cloud: Cloud, vid: str) -> list[str]:
    return [a["id"] for a in _service(cloud).attachments_of(vid)]


def _mapped_attachment(cloud: Cloud, sid: str) -> str:
    listed = cloud.api.get(f"/v2.1/servers/{sid}/os-volume_attachments", version="2.89")
    (attachment,) = listed.json()["volumeAttachments"]
    return str(attachment["attachment_id"])


def _settled(cloud: Cloud, sid: str, status: str) -> dict[str, Any]:
    """The server once no task runs, in ``status``."""
    shown = cloud.wait(sid)
    assert shown["status"] == status, shown.get("fault")
    return shown


def _until(check: Any, what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)  # polling an RPC cast's effect, bounded by the deadline


def test_rebuild_with_a_new_image_reimages_the_root_volume(cloud: Cloud, line: EventLine) -> None:
    sid, vid = _boot(cloud)
    before = _mapped_attachment(cloud, sid)
    with _service(cloud).files.path(vid).open("r+b") as disk:  # tempest's `touch test_file`
        disk.seek(4096)
        disk.write(b"test_file")
    resp = _rebuild(cloud, sid, ALT, name="rebuilt", metadata={"rebuild": "server"},
                    adminPass="rebuildPassw0rd")  # fmt: skip
    assert resp.status_code == 202, resp.text
    answered = resp.json()["server"]
    assert answered["image"] == "" and answered["name"] == "rebuilt"
    shown = _settled(cloud, sid, "ACTIVE")
    assert shown["image"] == "" and shown["name"] == "rebuilt"
    assert shown["os-extended-volumes:volumes_attached"] == [
        {"id": vid, "delete_on_termination": True}
    ]
    volume = get_volume_adapter(cloud.services.conf, cloud.services.api_db)
    info = volume.get(_context(), vid)
    assert (info.image_id, info.status) == (ALT, "in-use")
    row = _service(cloud).volume(ADMIN, vid)
    assert row["image_metadata"]["image_id"] == ALT
    disk = _service(cloud).files.path(vid).read_bytes()
    assert disk[: len(DATA[ALT])] == DATA[ALT] and b"test_file" not in disk
    # a new attachment, the old one gone; the guest defined again on the same volume
    (attachment,) = _attachment_ids(cloud, vid)
    assert attachment == _mapped_attachment(cloud, sid) != before
    (compute,) = cloud.computes.values()
    root = compute.host.driver._guest(sid).spec.root_volume  # type: ignore[attr-defined]
    assert root.volume_id == vid and root.connection_info["attachment_id"] == attachment
    assert line.sent == [(sid, "volume-reimaged", vid)]
    events = cloud.events(sid, "rebuild")
    assert events["compute_rebuild_instance"] == "Success"
    # the image's system metadata and the request spec describe the new image
    assert cloud.api.get(f"/v2.1/servers/{sid}/metadata").json()["metadata"] == {
        "rebuild": "server"
    }


def _context() -> Any:
    from openkeel.volume.adapter import VolumeContext

    return VolumeContext("admin", "admin", True)


def test_the_same_image_at_2_93_reimages_too(cloud: Cloud, line: EventLine) -> None:
    """Nova from 2.93 reimages the root volume of any volume-backed rebuild."""
    sid, vid = _boot(cloud)
    assert _rebuild(cloud, sid, IMAGE).status_code == 202
    _settled(cloud, sid, "ACTIVE")
    assert line.sent == [(sid, "volume-reimaged", vid)]
    before_2_93 = _rebuild(cloud, sid, IMAGE, version="2.92")
    assert before_2_93.status_code == 202
    _settled(cloud, sid, "ACTIVE")
    assert len(line.sent) == 1  # no reimage below 2.93


def test_refusals(cloud: Cloud, line: EventLine) -> None:
    sid, vid = _boot(cloud)
    old = _rebuild(cloud, sid, ALT, version="2.92")
    assert old.status_code == 400
    assert old.json()["badRequest"]["message"] == (
        f"Image {ALT} is unacceptable: Unable to rebuild with a different image for a "
        "volume-backed server."
    )
    small = _rebuild(cloud, sid, BIG)
    assert small.status_code == 400
    assert small.json()["badRequest"]["message"] == (
        "Volume is smaller than the minimum size specified in image metadata. Volume size is "
        f"{1 << 30} bytes, minimum size is {5 << 30} bytes."
    )
    hungry = _rebuild(cloud, sid, HUNGRY)
    assert hungry.status_code == 400
    assert hungry.json()["badRequest"]["message"] == (
        "Flavor's memory is too small for requested image."
    )
    unknown = _rebuild(cloud, sid, "3d2a4c2e-6a55-4a3b-9d41-0a1f6b2f7aff")
    assert unknown.status_code == 400
    assert cloud.api.get(f"/v2.1/servers/{sid}").json()["server"]["status"] == "ACTIVE"
    assert line.sent == [] and _service(cloud).volume(ADMIN, vid)["image_metadata"]["image_id"] == IMAGE  # fmt: skip


def _failed(cloud: Cloud, sid: str, vid: str) -> None:
    shown = _settled(cloud, sid, "ERROR")
    assert shown["fault"]["message"] == (
        f"Build of instance {sid} aborted: Failed to rebuild volume backed instance."
    )
    assert cloud.events(sid, "rebuild")["compute_rebuild_instance"] == "Error"
    # one attachment, the one the mapping names: the server's delete gives it back
    assert _attachment_ids(cloud, vid) == [_mapped_attachment(cloud, sid)]
    assert cloud.api.delete(f"/v2.1/servers/{sid}").status_code == 204
    cloud.wait(sid, gone=True)
    _until(lambda: vid not in {r["id"] for r in _service(cloud).visible(ADMIN, "volumes", True)},
           "the delete_on_termination volume to go")  # fmt: skip
    assert _service(cloud).store.list("attachments", volume_id=vid) == []


def test_a_failed_reimage_ends_in_error_without_a_leaked_attachment(
    cloud: Cloud, line: EventLine, per_gb: Any
) -> None:
    """Cinder marks the volume ``error`` and sends nothing: the host's wait times out."""
    per_gb(1)
    sid, vid = _boot(cloud)
    assert _rebuild(cloud, sid, BROKEN).status_code == 202
    _until(lambda: _service(cloud).volume(ADMIN, vid)["status"] == "error", "the reimage to fail")
    assert line.sent == []
    _failed(cloud, sid, vid)


def test_an_event_that_never_comes_ends_in_error(
    cloud: Cloud, line: EventLine, per_gb: Any
) -> None:
    per_gb(1)
    line.held = True
    sid, vid = _boot(cloud)
    started = time.monotonic()
    assert _rebuild(cloud, sid, ALT).status_code == 202
    _failed(cloud, sid, vid)
    assert time.monotonic() - started >= 1  # the 1 s of a 1 GB image
    assert line.sent == [(sid, "volume-reimaged", vid)]  # sent, and lost


def test_a_delete_during_the_wait(cloud: Cloud, line: EventLine, per_gb: Any) -> None:
    """The rebuild gives up at once (Nova's delete would wait for the time-out)."""
    per_gb(600)
    line.held = True
    sid, vid = _boot(cloud)
    (compute,) = cloud.computes.values()
    assert _rebuild(cloud, sid, ALT).status_code == 202
    _until(lambda: compute.host.events.pending(sid) == [f"volume-reimaged-{vid}"], "the wait")
    started = time.monotonic()
    assert cloud.api.delete(f"/v2.1/servers/{sid}").status_code == 204
    cloud.wait(sid, gone=True)
    assert time.monotonic() - started < 30
    _until(lambda: vid not in {r["id"] for r in _service(cloud).visible(ADMIN, "volumes", True)},
           "the delete_on_termination volume to go")  # fmt: skip
    assert _service(cloud).store.list("attachments", volume_id=vid) == []
    assert compute.host.events.pending(sid) == []


def test_the_event_arrives_while_the_host_waits(cloud: Cloud, line: EventLine) -> None:
    """The event is what ends the wait: held, then let through, the rebuild completes."""
    sid, vid = _boot(cloud)
    (compute,) = cloud.computes.values()
    line.held = True
    assert _rebuild(cloud, sid, ALT).status_code == 202
    _until(lambda: compute.host.events.pending(sid) == [f"volume-reimaged-{vid}"], "the wait")
    assert cloud.api.get(f"/v2.1/servers/{sid}").json()["server"]["OS-EXT-STS:task_state"] == "rebuilding"  # fmt: skip
    threading.Thread(target=line.send, args=(sid, "volume-reimaged", vid)).start()
    _settled(cloud, sid, "ACTIVE")
