"""Boot from volume through every role (API, conductor, scheduler, compute, the embedded volume
service), on both transports: an existing volume, and volumes compute makes from an image, a
snapshot or nothing; what the server shows (no image, its volumes, no root disk in
Placement); the guest's root is the volume; delete releases the volumes and deletes those
marked delete_on_termination; a build failing at the volumes (never available, attachment
refused) and a delete at each step of the build leave no attachment and no volume without
its delete_on_termination semantics."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from openkeel.compute.operations.boot_volumes import BlockDevicePrepFailed
from openkeel.virt.fake_config import InjectedFailure
from openkeel.volume.adapter import VolumeContext, VolumeInfo
from openkeel.volume.embedded.adapter import EmbeddedVolumes
from openkeel.volume.embedded.service import Caller, ImageCopy, VolumeService
from openkeel.volume.factory import get_volume_adapter, provide_images
from tests.functional.conftest import IMAGE, Cloud
from tests.functional.test_delete_races import _Held, _hold_step
from tests.multiattach import multiattach_type

ADMIN = Caller("admin", "admin", True)


@pytest.fixture(autouse=True)
def images_for_volumes(cloud: Cloud) -> None:
    """The embedded volume service reads images as the all-in-one wires it."""

    def fetch(caller: Caller, image_id: str) -> ImageCopy | None:
        if image_id != IMAGE:
            return None
        return ImageCopy(iter(()), 0, 0, {"image_id": image_id, "image_name": "cirros"})

    provide_images(cloud.services.conf, cloud.services.api_db, fetch)


def _service(cloud: Cloud) -> VolumeService:
    adapter = get_volume_adapter(cloud.services.conf, cloud.services.api_db)
    assert isinstance(adapter, EmbeddedVolumes)
    return adapter.service


def _volume(cloud: Cloud, bootable: bool = True, **attrs: Any) -> str:
    service = _service(cloud)
    volume_id = str(service.create_volume(ADMIN, {"size": 1, **attrs})["id"])
    service.set_bootable(ADMIN, volume_id, bootable)
    return volume_id


def _volumes(cloud: Cloud) -> dict[str, str]:
    """Every live volume of the service: id -> status."""
    return {r["id"]: r["status"] for r in _service(cloud).visible(ADMIN, "volumes", True)}


def _attachments(cloud: Cloud) -> list[Any]:
    service = _service(cloud)
    return [a for v in _volumes(cloud) for a in service.attachments_of(v)]


def _boot(cloud: Cloud, bdms: list[dict[str, Any]], version: str = "2.79", **extra: Any) -> Any:
    server = {"name": "bfv", "flavorRef": "1", "networks": "none",
              "block_device_mapping_v2": bdms, **extra}  # fmt: skip
    return cloud.api.post("/v2.1/servers", {"server": server}, version=version)


def _root(volume_id: str, delete: bool = False) -> dict[str, Any]:
    return {"source_type": "volume", "destination_type": "volume", "uuid": volume_id,
            "boot_index": 0, "delete_on_termination": delete}  # fmt: skip


def _guest(cloud: Cloud, sid: str) -> Any:
    (service,) = cloud.computes.values()
    return service.host.driver._guest(sid)  # the fake hypervisor's record of the guest


def _until(check: Any, what: str) -> None:
    deadline = time.monotonic() + 30
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)  # polling an RPC cast's effect, bounded by the deadline


def test_boot_from_an_existing_volume(cloud: Cloud) -> None:
    vid = _volume(cloud)
    resp = _boot(cloud, [_root(vid)])
    assert resp.status_code == 202, resp.text
    sid = resp.json()["server"]["id"]
    server = cloud.wait(sid)
    assert server["status"] == "ACTIVE", server.get("fault")
    assert server["image"] == ""
    assert server["os-extended-volumes:volumes_attached"] == [
        {"id": vid, "delete_on_termination": False}
    ]
    assert _volumes(cloud)[vid] == "in-use"
    root = _guest(cloud, sid).spec.root_volume
    assert root is not None and root.volume_id == vid and root.device_name == "/dev/vda"
    assert root.connection_info  # the attachment's connection info reached the driver
    assert set(_guest(cloud, sid).volumes) == {vid}
    # Placement: no DISK_GB for a volume-backed root (flavor 1 has no ephemeral disk).
    assert "DISK_GB" not in cloud.placement.get_allocations(sid).allocations.popitem()[1]
    listed = cloud.api.get(f"/v2.1/servers/{sid}/os-volume_attachments").json()
    assert [(a["volumeId"], a["device"]) for a in listed["volumeAttachments"]] == [
        (vid, "/dev/vda")
    ]
    assert cloud.api.delete(f"/v2.1/servers/{sid}").status_code == 204
    cloud.wait(sid, gone=True)
    _until(lambda: _volumes(cloud).get(vid) == "available", "the volume to be given back")
    assert _attachments(cloud) == []


def test_volumes_made_from_an_image_a_snapshot_and_nothing(cloud: Cloud) -> None:
    source = _volume(cloud)
    snapshot = _service(cloud).create_snapshot(ADMIN, {"volume_id": source})["id"]
    before = set(_volumes(cloud))
    bdms = [
        {"source_type": "image", "destination_type": "volume", "uuid": IMAGE, "boot_index": 0,
         "volume_size": 2, "delete_on_termination": True, "tag": "root"},
        {"source_type": "snapshot", "destination_type": "volume", "uuid": snapshot,
         "boot_index": 1, "delete_on_termination": False},
        {"source_type": "blank", "destination_type": "volume", "volume_size": 1,
         "boot_index": -1, "delete_on_termination": True, "volume_type": "__DEFAULT__"},
    ]  # fmt: skip
    resp = _boot(cloud, bdms, version="2.67")
    assert resp.status_code == 202, resp.text
    sid = resp.json()["server"]["id"]
    server = cloud.wait(sid)
    assert server["status"] == "ACTIVE", server.get("fault")
    assert server["image"] == ""
    made = set(_volumes(cloud)) - before
    assert len(made) == 3 and {_volumes(cloud)[v] for v in made} == {"in-use"}
    attached = server["os-extended-volumes:volumes_attached"]
    assert {a["id"] for a in attached} == made
    spec = _guest(cloud, sid).spec
    assert [d.boot_index for d in spec.block_devices] == [0, 1, -1]
    assert [d.device_name for d in spec.block_devices] == ["/dev/vda", "/dev/vdb", "/dev/vdc"]
    assert spec.root_volume is not None and spec.root_volume.size_gb == 2
    assert _service(cloud).volume(ADMIN, spec.root_volume.volume_id)["bootable"]
    kept = spec.block_devices[1].volume_id
    assert cloud.api.delete(f"/v2.1/servers/{sid}").status_code == 204
    cloud.wait(sid, gone=True)
    _until(lambda: set(_volumes(cloud)) - before == {kept}, "the d_o_t volumes to go")
    assert _volumes(cloud)[kept] == "available" and _attachments(cloud) == []


def test_legacy_mapping_and_image_with_a_data_volume(cloud: Cloud) -> None:
    root = _volume(cloud)
    legacy = [{"volume_id": root, "device_name": "/dev/vda", "delete_on_termination": "1"}]
    resp = cloud.api.post(
        "/v2.1/servers",
        {"server": {"name": "legacy", "flavorRef": "1", "networks": "none",
                    "block_device_mapping": legacy}},
        version="2.37",
    )  # fmt: skip
    assert resp.status_code == 202, resp.text
    sid = resp.json()["server"]["id"]
    assert cloud.wait(sid)["status"] == "ACTIVE"
    assert _guest(cloud, sid).spec.root_volume.volume_id == root
    # An image root plus a volume: the image is the root, the volume a data disk.
    data = _volume(cloud, bootable=False)
    bdms = [
        {"source_type": "image", "destination_type": "local", "uuid": IMAGE, "boot_index": 0},
        {"source_type": "volume", "destination_type": "volume", "uuid": data, "boot_index": 1,
         "tag": "data"},
    ]  # fmt: skip
    resp = _boot(cloud, bdms, version="2.42", imageRef=IMAGE)
    assert resp.status_code == 202, resp.text
    other = cloud.wait(resp.json()["server"]["id"])
    assert other["status"] == "ACTIVE" and other["image"]["id"] == IMAGE
    spec = _guest(cloud, other["id"]).spec
    assert spec.root_volume is None and spec.image is not None
    assert [d.tag for d in spec.block_devices if d.volume_id] == ["data"]
    assert cloud.api.delete(f"/v2.1/servers/{sid}").status_code == 204
    cloud.wait(sid, gone=True)
    _until(lambda: root not in _volumes(cloud), "the legacy d_o_t root to be deleted")


@pytest.mark.parametrize(
    ("bdms", "extra", "version", "message"),
    [
        (
            [{"source_type": "volume", "destination_type": "volume",
              "uuid": "6e1e2b57-7d5d-4b8b-9d59-3f4a1c2b9e10", "boot_index": 0}],
            {}, "2.37", "Volume 6e1e2b57-7d5d-4b8b-9d59-3f4a1c2b9e10 could not be found.",
        ),
        (
            [{"source_type": "blank", "destination_type": "volume", "boot_index": 0}],
            {}, "2.37",
            "Blank volumes (source: 'blank', dest: 'volume') need to have non-zero size",
        ),
        (
            [{"source_type": "image", "destination_type": "volume", "uuid": IMAGE,
              "boot_index": 0}],
            {}, "2.37",
            "Images with destination_type 'volume' need to have a non-zero size specified",
        ),
        (
            [{"source_type": "image", "destination_type": "volume",
              "uuid": "6e1e2b57-7d5d-4b8b-9d59-3f4a1c2b9e11", "boot_index": 0,
              "volume_size": 1}],
            {}, "2.37",
            "Block Device Mapping is Invalid: failed to get image "
            "6e1e2b57-7d5d-4b8b-9d59-3f4a1c2b9e11.",
        ),
        (
            [{"source_type": "snapshot", "destination_type": "volume",
              "uuid": "6e1e2b57-7d5d-4b8b-9d59-3f4a1c2b9e12", "boot_index": 0}],
            {}, "2.37",
            "Block Device Mapping is Invalid: failed to get snapshot "
            "6e1e2b57-7d5d-4b8b-9d59-3f4a1c2b9e12.",
        ),
        (
            [{"source_type": "blank", "destination_type": "volume", "boot_index": 1,
              "volume_size": 1}],
            {}, "2.37",
            "Block Device Mapping is Invalid: Boot sequence for the instance and image/block "
            "device mapping combination is not valid.",
        ),
        (
            [{"source_type": "blank", "destination_type": "volume", "boot_index": 0,
              "volume_size": 1}],
            {"max_count": 2}, "2.37", "Cannot attach one or more volumes to multiple instances",
        ),
        (
            [{"source_type": "blank", "destination_type": "volume", "boot_index": 0,
              "volume_size": 1, "volume_type": "gold"}],
            {}, "2.67", "Volume type gold could not be found.",
        ),
    ],
)  # fmt: skip
def test_mapping_errors(
    cloud: Cloud, bdms: list[dict[str, Any]], extra: dict[str, Any], version: str, message: str
) -> None:
    if "max_count" in extra:  # several servers cannot share one existing volume
        bdms = [_root(_volume(cloud))]
    before = _volumes(cloud)
    resp = _boot(cloud, bdms, version=version, **extra)
    assert resp.status_code == 400, resp.text
    assert resp.json()["badRequest"]["message"] == message
    assert _volumes(cloud) == before and _attachments(cloud) == []


def test_volume_in_use_not_bootable_and_multiattach(cloud: Cloud) -> None:
    vid = _volume(cloud)
    first = _boot(cloud, [_root(vid)])
    assert first.status_code == 202
    taken = _boot(cloud, [_root(vid)])
    assert taken.status_code == 400
    assert "Invalid volume" in taken.json()["badRequest"]["message"]
    plain = _volume(cloud, bootable=False)
    refused = _boot(cloud, [_root(plain)])
    assert refused.status_code == 400
    assert refused.json()["badRequest"]["message"] == f"Block Device {plain} is not bootable."
    shared = _volume(cloud, volume_type=multiattach_type(_service(cloud)))
    old = _boot(cloud, [_root(shared)], version="2.59")
    assert old.json()["badRequest"]["message"] == (
        "Multiattach volumes are only supported starting with compute API version 2.60."
    )
    assert _volumes(cloud)[plain] == "available" and _volumes(cloud)[shared] == "available"
    assert cloud.wait(first.json()["server"]["id"])["status"] == "ACTIVE"


class _Refusing:
    """The compute host's volume adapter with one step failing or never finishing."""

    def __init__(self, real: Any, *, never_available: bool = False) -> None:
        self._real = real
        self._never_available = never_available
        self.created: list[str] = []

    def create_volume(self, context: VolumeContext, wanted: Any) -> VolumeInfo:
        made: VolumeInfo = self._real.create_volume(context, wanted)
        self.created.append(made.id)
        return made

    def get(self, context: VolumeContext, volume_id: str) -> VolumeInfo:
        found: VolumeInfo = self._real.get(context, volume_id)
        if self._never_available and volume_id in self.created:
            return VolumeInfo(**{**found.__dict__, "status": "creating"})
        return found

    def attachment_update(self, context: VolumeContext, attachment_id: str, connector: Any) -> Any:
        if not self._never_available:
            raise RuntimeError("the storage back end refused the connection")
        return self._real.attachment_update(context, attachment_id, connector)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


@pytest.fixture
def refusing(cloud: Cloud, request: pytest.FixtureRequest) -> Iterator[_Refusing]:
    (service,) = cloud.computes.values()
    real = service.host.volumes
    wrapper = _Refusing(real, never_available=request.param)
    service.host.volumes = wrapper  # type: ignore[assignment]
    slept: list[float] = []
    service.host.sleep = slept.append
    conf = cloud.services.conf
    conf.set_override("block_device_allocate_retries", 2)
    conf.set_override("block_device_allocate_retries_interval", 5)
    yield wrapper
    conf.clear_override("block_device_allocate_retries")
    conf.clear_override("block_device_allocate_retries_interval")
    if request.param:
        assert slept == [5.0, 5.0]  # Nova's semantics: 1 + retries checks, interval apart
    service.host.volumes = real


@pytest.mark.parametrize("refusing", [True, False], ids=["never-available", "attach-fails"],
                         indirect=True)  # fmt: skip
def test_a_build_failing_at_its_volumes_leaves_nothing_behind(
    cloud: Cloud, refusing: _Refusing
) -> None:
    existing = _volume(cloud, bootable=False)
    before = set(_volumes(cloud))
    bdms = [
        {"source_type": "image", "destination_type": "volume", "uuid": IMAGE, "boot_index": 0,
         "volume_size": 1, "delete_on_termination": True},
        {"source_type": "blank", "destination_type": "volume", "volume_size": 1,
         "boot_index": -1, "delete_on_termination": False},
        {"source_type": "volume", "destination_type": "volume", "uuid": existing,
         "boot_index": -1},
    ]  # fmt: skip
    resp = _boot(cloud, bdms)
    assert resp.status_code == 202, resp.text
    sid = resp.json()["server"]["id"]
    server = cloud.wait(sid)
    assert server["status"] == "ERROR"
    assert server["fault"]["message"] == str(BlockDevicePrepFailed(sid))
    assert _attachments(cloud) == []
    assert _volumes(cloud)[existing] == "available"
    made = set(_volumes(cloud)) - before
    # The delete_on_termination volume is gone; what is left is still the server's.
    attached = {a["id"] for a in server["os-extended-volumes:volumes_attached"]}
    assert made <= attached and len(made) <= 1
    assert cloud.api.delete(f"/v2.1/servers/{sid}").status_code == 204
    cloud.wait(sid, gone=True)
    assert _attachments(cloud) == []
    assert existing in _volumes(cloud) and set(_volumes(cloud)) - before == made


@pytest.mark.parametrize("step", ["accepted", "created-in-cell", "mapped"])
def test_delete_during_the_build_releases_the_volumes(cloud: Cloud, step: str) -> None:
    kept, doomed = _volume(cloud), _volume(cloud, bootable=False)
    hold = _hold_step(cloud, step)
    assert isinstance(hold, _Held)
    bdms = [
        _root(kept),
        {"source_type": "volume", "destination_type": "volume", "uuid": doomed,
         "boot_index": -1, "delete_on_termination": True},
        {"source_type": "blank", "destination_type": "volume", "volume_size": 1,
         "boot_index": -1, "delete_on_termination": True},
    ]  # fmt: skip
    before = set(_volumes(cloud))
    resp = _boot(cloud, bdms)
    assert resp.status_code == 202, resp.text
    sid = resp.json()["server"]["id"]
    try:
        assert hold.reached.wait(30), f"the build never reached {step}"
        assert _volumes(cloud)[kept] == "reserved"  # the API reserved it
        assert cloud.api.delete(f"/v2.1/servers/{sid}").status_code == 204
    finally:
        hold.release()
    cloud.wait(sid, gone=True)
    _until(
        lambda: _volumes(cloud).get(kept) == "available" and not _attachments(cloud),
        "the reservations to be given back",
    )
    _until(lambda: set(_volumes(cloud)) == before - {doomed}, "the d_o_t volume to go")


def test_the_os_volumes_boot_proxy(cloud: Cloud) -> None:
    """Nova's ``os-volumes_boot``: the servers API under another path, until 2.102."""
    vid = _volume(cloud)
    body = {"server": {"name": "proxied", "flavorRef": "1", "networks": "none",
                       "block_device_mapping_v2": [_root(vid, delete=True)]}}  # fmt: skip
    assert cloud.api.post("/v2.1/os-volumes_boot", body, version="2.103").status_code == 404
    resp = cloud.api.post("/v2.1/os-volumes_boot", body, version="2.37")
    assert resp.status_code == 202, resp.text
    sid = resp.json()["server"]["id"]
    assert cloud.wait(sid)["status"] == "ACTIVE"
    shown = cloud.api.get(f"/v2.1/os-volumes_boot/{sid}", version="2.102")
    assert shown.status_code == 200 and shown.json()["server"]["image"] == ""
    listed = cloud.api.get("/v2.1/os-volumes_boot/detail", version="2.37").json()["servers"]
    assert [s["id"] for s in listed] == [sid]
    stop = cloud.api.post(f"/v2.1/os-volumes_boot/{sid}/action", {"os-stop": None})
    assert stop.status_code == 202
    assert cloud.wait(sid)["status"] == "SHUTOFF"
    assert cloud.api.delete(f"/v2.1/os-volumes_boot/{sid}").status_code == 204
    cloud.wait(sid, gone=True)
    _until(lambda: vid not in _volumes(cloud), "the d_o_t root to be deleted")


def test_snapshot_of_a_volume_backed_server_and_a_server_from_it(cloud: Cloud) -> None:
    """createImage snapshots the volumes (Nova's snapshot_volume_backed) into an active image
    without data whose block_device_mapping boots a server from volumes of the snapshots."""
    vid = _volume(cloud)
    resp = _boot(cloud, [_root(vid)])
    sid = resp.json()["server"]["id"]
    assert cloud.wait(sid)["status"] == "ACTIVE"
    snap = cloud.api.post(f"/v2.1/servers/{sid}/action", {"createImage": {"name": "bfv-snap"}},
                          version="2.45")  # fmt: skip
    assert snap.status_code == 202, snap.text
    image_id = snap.json()["image_id"]
    image = cloud.api.get(f"/v2.1/images/{image_id}").json()["image"]
    assert image["status"] == "ACTIVE"
    meta = image["metadata"]
    assert meta["bdm_v2"] == "True" and meta["root_device_name"] == "/dev/vda"
    (mapping,) = json.loads(meta["block_device_mapping"])
    assert (mapping["source_type"], mapping["destination_type"], mapping["boot_index"]) == (
        "snapshot",
        "volume",
        0,
    )
    snapshot = _service(cloud).snapshot(ADMIN, mapping["snapshot_id"])
    assert snapshot["volume_id"] == vid and snapshot["status"] == "available"
    actions = cloud.api.get(f"/v2.1/servers/{sid}/os-instance-actions").json()
    assert "createImage" in [a["action"] for a in actions["instanceActions"]]
    # A server from the image boots from a new volume made from the snapshot.
    before = set(_volumes(cloud))
    again = cloud.boot("from-snapshot", imageRef=image_id)
    server = cloud.wait(again["id"])
    assert server["status"] == "ACTIVE", server.get("fault")
    (made,) = set(_volumes(cloud)) - before
    assert _service(cloud).volume(ADMIN, made)["snapshot_id"] == mapping["snapshot_id"]
    root = _guest(cloud, again["id"]).spec.root_volume
    assert root is not None and root.volume_id == made


def test_rebuild_of_a_volume_backed_server(cloud: Cloud) -> None:
    """Nova before 2.93: the image the root volume was made from only; the guest is defined
    again on the same root volume."""
    bdms = [{"source_type": "image", "destination_type": "volume", "uuid": IMAGE,
             "boot_index": 0, "volume_size": 1, "delete_on_termination": True}]  # fmt: skip
    sid = _boot(cloud, bdms).json()["server"]["id"]
    assert cloud.wait(sid)["status"] == "ACTIVE"
    root = _guest(cloud, sid).spec.root_volume.volume_id
    rebuilt = cloud.api.post(f"/v2.1/servers/{sid}/action", {"rebuild": {"imageRef": IMAGE}})
    assert rebuilt.status_code == 202, rebuilt.text
    assert cloud.wait(sid)["status"] == "ACTIVE"
    assert _guest(cloud, sid).spec.root_volume.volume_id == root
    assert _volumes(cloud)[root] == "in-use"

    blank_root = _volume(cloud)  # a bootable volume not made from an image
    other = _boot(cloud, [_root(blank_root)]).json()["server"]["id"]
    assert cloud.wait(other)["status"] == "ACTIVE"
    path = f"/v2.1/servers/{other}/action"
    refused = cloud.api.post(path, {"rebuild": {"imageRef": IMAGE}}, version="2.92")
    assert refused.status_code == 400
    assert refused.json()["badRequest"]["message"] == (
        f"Image {IMAGE} is unacceptable: Unable to rebuild with a different image for a "
        "volume-backed server."
    )
    # 2.93 reimages the root volume: tests/functional/test_rebuild_volume_backed.py


def test_a_rescheduled_build_attaches_the_same_volumes_again(cloud: Cloud) -> None:
    """A spawn failing on the first host: its attachments deleted, the alternate host
    attaches the volumes the first one made (none made twice, none left attached twice)."""
    (first,) = cloud.computes.values()
    second = cloud.add_compute()
    # One failure shared by both hosts: whichever builds first fails, the other succeeds.
    first.host.driver._failures = {InjectedFailure("spawn", times=1): 1}  # type: ignore[attr-defined]
    second.host.driver._failures = first.host.driver._failures  # type: ignore[attr-defined]
    existing = _volume(cloud)
    before = set(_volumes(cloud))
    bdms = [_root(existing),
            {"source_type": "blank", "destination_type": "volume", "volume_size": 1,
             "boot_index": -1, "delete_on_termination": True}]  # fmt: skip
    sid = _boot(cloud, bdms).json()["server"]["id"]
    server = cloud.wait(sid)
    assert server["status"] == "ACTIVE", server.get("fault")
    (made,) = set(_volumes(cloud)) - before
    assert {_volumes(cloud)[v] for v in (existing, made)} == {"in-use"}
    assert sorted(a["volume_id"] for a in _attachments(cloud)) == sorted([existing, made])
    assert list(first.host.driver._failures.values()) == [0]  # type: ignore[attr-defined]
