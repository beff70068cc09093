"""A cloud on the cinder backend (``[openkeel_volume] backend = cinder``) against the real
Cinder of scripts/start-cinder.sh: a server attaches and detaches a Cinder volume through
``/servers/{id}/os-volume_attachments`` (the API reserves, compute updates and completes the
attachment in Cinder, the fake driver plugs it), Cinder's refusals answer Nova's 4xx, and a
server's delete removes its attachments and its ``delete_on_termination`` volumes in Cinder.
The requests carry the Cinder user's real Keystone token (noauth takes it as the user's name,
the project from ``X-Auth-Project-Id``), so Cinder is called with the user's token and the
service token, as Nova calls it."""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from keystoneauth1 import session as ksa_session
from keystoneauth1.identity import v3

from openkeel.clients.placement_embedded import EmbeddedPlacement
from openkeel.volume.adapter import VolumeContext
from openkeel.volume.cinder import CinderVolumes
from openkeel.volume.errors import VolumeNotFound
from openkeel.volume.factory import get_volume_adapter
from tests.conftest import make_services
from tests.functional.conftest import IMAGE, Cloud, start_cloud, stop_cloud
from tests.volume.test_cinder_adapter import (
    CINDER_OPTIONS,
    KEYSTONE_URL,
    Cinder,
    _attachments_of,
    cinder,
    users,
)

__all__ = ["cinder", "users"]


@pytest.fixture(scope="module")
def placement(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedPlacement]:
    """This module's embedded Placement (one may run per process: ended with the module)."""
    embedded = EmbeddedPlacement(tmp_path_factory.mktemp("placement")).start()
    yield embedded
    embedded.stop()


@pytest.fixture
def cinder_cloud(tmp_path: Path, placement: EmbeddedPlacement, cinder: Cinder) -> Iterator[Cloud]:
    built = start_cloud(make_services(tmp_path, **CINDER_OPTIONS), placement,
                        f"inproc://cinder-{uuid.uuid4().hex[:8]}")  # fmt: skip
    built.add_compute()
    yield built
    adapter = get_volume_adapter(built.services.conf, built.services.api_db)
    assert isinstance(adapter, CinderVolumes)
    adapter.close()
    stop_cloud(built)


def _until(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 60
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.1)  # the compute host's cast and Cinder's volume service are asynchronous


def _as(user: VolumeContext) -> dict[str, Any]:
    """The request options that make the API's context ``user``'s, token included."""
    return {"token": user.auth_token, "headers": {"X-Auth-Project-Id": str(user.project_id)}}


def _boot(cloud: Cloud, user: VolumeContext, name: str) -> str:
    body = {"server": {"name": name, "imageRef": IMAGE, "flavorRef": "1", "networks": "none"}}
    resp = cloud.api.post("/v2.1/servers", body, version="2.37", **_as(user))
    assert resp.status_code == 202, resp.text
    sid = str(resp.json()["server"]["id"])
    assert cloud.wait(sid)["status"] == "ACTIVE"
    return sid


def _attach(cloud: Cloud, user: VolumeContext, sid: str, volume_id: str, **extra: Any) -> Any:
    body = {"volumeAttachment": {"volumeId": volume_id, **extra}}
    return cloud.api.post(f"/v2.1/servers/{sid}/os-volume_attachments", body, version="2.79",
                          **_as(user))  # fmt: skip


def _guest_volumes(cloud: Cloud, sid: str) -> set[str]:
    (service,) = cloud.computes.values()
    return set(service.host.driver._guest(sid).volumes)  # type: ignore[attr-defined]


def test_attach_detach_and_delete_through_cinder(cinder_cloud: Cloud, cinder: Cinder) -> None:
    cloud, demo = cinder_cloud, cinder.demo
    sid, other = _boot(cloud, demo, "cinder-1"), _boot(cloud, demo, "cinder-2")

    def status(volume_id: str) -> str:
        return cinder.adapter.get(demo, volume_id).status

    unknown = _attach(cloud, demo, sid, str(uuid.uuid4()))
    assert unknown.status_code == 404, unknown.text

    data = cinder.volume(name="data").id
    resp = _attach(cloud, demo, sid, data, tag="data")
    assert resp.status_code == 200, resp.text
    assert resp.json()["volumeAttachment"]["device"] == "/dev/vdb"
    _until(lambda: status(data) == "in-use", "the volume in use in Cinder")
    assert _guest_volumes(cloud, sid) == {data}
    (attached,) = cinder.adapter.get(cinder.demo, data).attachments
    assert (attached.server_id, attached.device) == (sid, "/dev/vdb")
    # in use and not multiattach: another server is refused (Nova's own check of its
    # mappings, before Cinder's: decision 0075)
    elsewhere = _attach(cloud, demo, other, data)
    assert elsewhere.status_code == 400, elsewhere.text
    assert elsewhere.json()["badRequest"]["message"] == (
        f"Invalid volume: volume {data} is already attached to instances: {sid}"
    )

    detached = cloud.api.delete(f"/v2.1/servers/{sid}/os-volume_attachments/{data}", **_as(demo))
    assert detached.status_code == 202
    _until(lambda: status(data) == "available", "the volume available again in Cinder")
    _until(lambda: _guest_volumes(cloud, sid) == set(), "the guest to lose the volume")

    # a server's delete: the attachment goes, the delete_on_termination volume too
    doomed = cinder.volume(name="doomed").id
    assert _attach(cloud, demo, other, doomed, delete_on_termination=True).status_code == 200
    assert _attach(cloud, demo, other, data).status_code == 200
    _until(lambda: status(doomed) == "in-use" and status(data) == "in-use", "both in use")
    assert cloud.api.delete(f"/v2.1/servers/{other}", **_as(demo)).status_code == 204
    cloud.wait(other, gone=True)
    _until(lambda: status(data) == "available", "the kept volume detached")

    def deleted() -> bool:
        try:
            return status(doomed) == "deleting"
        except VolumeNotFound:  # gone already
            return True

    _until(deleted, "the delete_on_termination volume deleted")


def test_a_volume_backed_rebuild_cinder_cannot_reimage(cinder_cloud: Cloud, cinder: Cinder) -> None:
    """2.93 against the real Cinder: the host re-reserves the root volume in Cinder (a second
    attachment of the server, Cinder's override for its in-use volume), deletes the old one
    and asks for the reimage at 3.68. Cinder accepts it; its fake (LVM) driver cannot write
    an image into a volume (it runs ``sudo ... qemu-img``: decision 0069), so Cinder marks the
    volume ``error`` and sends nothing (Cinder's image lookup failing instead: its 404), the
    host gives up, the server ends in ERROR with Nova's fault, and the one attachment Cinder
    has is the one the server's mapping names, released by the server's delete."""
    cloud, demo = cinder_cloud, cinder.demo
    cloud.services.conf.set_override("reimage_timeout_per_gb", 1)  # the conf is this test's
    root = cinder.volume(name="root").id
    cinder.adapter._call(demo, "POST", f"/volumes/{root}/action", None,
                         {"os-set_bootable": {"bootable": True}})  # fmt: skip
    bdm = {"source_type": "volume", "destination_type": "volume", "uuid": root,
           "boot_index": 0, "delete_on_termination": False}  # fmt: skip
    body = {"server": {"name": "bfv", "flavorRef": "1", "networks": "none",
                       "block_device_mapping_v2": [bdm]}}  # fmt: skip
    resp = cloud.api.post("/v2.1/servers", body, version="2.79", **_as(demo))
    assert resp.status_code == 202, resp.text
    sid = str(resp.json()["server"]["id"])
    assert cloud.wait(sid)["status"] == "ACTIVE"
    (before,) = cinder.adapter.get(demo, root).attachments
    rebuilt = cloud.api.post(f"/v2.1/servers/{sid}/action", {"rebuild": {"imageRef": IMAGE}},
                             version="2.93", **_as(demo))  # fmt: skip
    assert rebuilt.status_code == 202, rebuilt.text
    shown = cloud.wait(sid)
    assert shown["status"] == "ERROR"
    assert shown["fault"]["message"] == (
        f"Build of instance {sid} aborted: Failed to rebuild volume backed instance."
    )
    # the volume's view lists attached attachments only; the reserved one is in /attachments
    (after,) = _attachments_of(cinder.adapter, root)
    assert after != before.attachment_id and before.server_id == sid
    listed = cloud.api.get(f"/v2.1/servers/{sid}/os-volume_attachments", version="2.89",
                           **_as(demo)).json()["volumeAttachments"]  # fmt: skip
    assert [a["attachment_id"] for a in listed] == [after]
    assert cinder.adapter.get(demo, root).status in ("error", "reserved")
    assert cloud.api.delete(f"/v2.1/servers/{sid}", **_as(demo)).status_code == 204
    cloud.wait(sid, gone=True)
    _until(lambda: _attachments_of(cinder.adapter, root) == [], "the root released")


def _server_with_volume(cloud: Cloud, cinder: Cinder, name: str) -> tuple[str, str]:
    """A server of the demo user's with a new Cinder volume attached (in-use): their ids."""
    sid = _boot(cloud, cinder.demo, name)
    data = cinder.volume(name=f"{name}-data").id
    assert _attach(cloud, cinder.demo, sid, data).status_code == 200
    _until(lambda: cinder.adapter.get(cinder.demo, data).status == "in-use", "attached")
    return sid, data


def _only_attachment(
    cloud: Cloud, cinder: Cinder, sid: str, data: str, host: str, before: str | None
) -> str | None:
    """The one attachment Cinder has of ``data``: the server's, the one its mapping names, not
    ``before``; the guest on ``host`` has the volume. Its id."""
    from openkeel.db.repositories import block_devices
    from tests.conftest import CELL1_UUID

    volume = cinder.adapter.get(cinder.demo, data)
    (attached,) = volume.attachments
    assert (volume.status, attached.server_id) == ("in-use", sid)
    with cloud.services.cell_dbs[CELL1_UUID].connect() as conn:
        (mapping,) = block_devices.volumes_of(conn, sid)
    assert attached.attachment_id == mapping.attachment_id != before
    # none reserved left over either (the volume's view lists attached ones only)
    assert _attachments_of(cinder.adapter, data) == [attached.attachment_id]
    assert data in cloud.computes[host].host.driver._guest(sid).volumes  # type: ignore[attr-defined]
    return attached.attachment_id


def test_moves_of_a_server_with_a_cinder_volume(cinder_cloud: Cloud, cinder: Cinder) -> None:
    """Resize to another host, revert, resize again and confirm (what the volume's owner may
    do): Cinder keeps one attachment for the server, a new one for each host (the one its
    mapping names), and the guest on the new host has the volume; a delete gives it back."""
    cloud, demo = cinder_cloud, cinder.demo
    (first,) = cloud.computes
    sid, data = _server_with_volume(cloud, cinder, "mover")

    def on(host: str, before: str | None) -> str | None:
        return _only_attachment(cloud, cinder, sid, data, host, before)

    original = on(first, None)
    second = cloud.add_compute().hostname
    path = f"/v2.1/servers/{sid}/action"

    def act(body: dict[str, Any], status: int = 202) -> None:
        resp = cloud.api.post(path, body, **_as(demo))
        assert resp.status_code == status, resp.text

    act({"resize": {"flavorRef": "2"}})
    server = cloud.wait(sid)
    assert (server["status"], server["OS-EXT-SRV-ATTR:host"]) == ("VERIFY_RESIZE", second)
    resized = on(second, original)
    act({"revertResize": None})
    server = cloud.wait(sid)
    assert (server["status"], server["OS-EXT-SRV-ATTR:host"]) == ("ACTIVE", first)
    reverted = on(first, resized)
    act({"resize": {"flavorRef": "2"}})
    assert cloud.wait(sid)["status"] == "VERIFY_RESIZE"
    act({"confirmResize": None}, 204)
    _until(lambda: cloud.wait(sid)["status"] == "ACTIVE", "the resize confirmed")
    on(second, reverted)

    assert cloud.api.delete(f"/v2.1/servers/{sid}", **_as(demo)).status_code == 204
    cloud.wait(sid, gone=True)
    _until(lambda: cinder.adapter.get(demo, data).status == "available", "given back")
    assert cinder.adapter.get(demo, data).attachments == ()


def _admin() -> dict[str, Any]:
    """The request options of Keystone's admin (start-keystone.sh's ``admin`` of project
    ``admin``) with a real token: the API's context (noauth: the token as the user name, the
    roles from ``X-Roles``) carries it, so the compute calls Cinder with the admin's token as
    Nova does with the request context's."""
    auth = v3.Password(auth_url=KEYSTONE_URL, username="admin", project_name="admin",
                       password=os.environ.get("ADMIN_PASSWORD", "admin-secret"),
                       user_domain_name="Default", project_domain_name="Default")  # fmt: skip
    sess = ksa_session.Session(auth=auth)
    try:
        token, project = sess.get_token(), auth.get_project_id(sess)
    finally:
        sess.session.close()
    return {"token": token,
            "headers": {"X-Auth-Project-Id": project, "X-Roles": "admin,member,reader"}}  # fmt: skip


def test_live_migration_of_a_server_with_a_cinder_volume(cinder_cloud: Cloud,
                                                         cinder: Cinder) -> None:  # fmt: skip
    """An admin live-migrates the demo user's server with a Cinder volume there and back: the
    destination makes and completes a new attachment with its connector while the source's
    still exists (both in Cinder, called with the admin's token), the source's is deleted when
    the guest moved; Cinder keeps one attachment, the mapping's, and the owner can still
    detach it afterwards."""
    cloud, demo = cinder_cloud, cinder.demo
    (first,) = cloud.computes
    sid, data = _server_with_volume(cloud, cinder, "live")
    original = _only_attachment(cloud, cinder, sid, data, first, None)
    second = cloud.add_compute().hostname
    admin = _admin()

    def live(host: str | None, to: str) -> None:
        body = {"os-migrateLive": {"host": host, "block_migration": "auto"}}
        resp = cloud.api.post(f"/v2.1/servers/{sid}/action", body, version="2.30", **admin)
        assert resp.status_code == 202, resp.text
        _until(lambda: cloud.wait(sid)["OS-EXT-SRV-ATTR:host"] == to, f"the guest on {to}")
        assert cloud.wait(sid)["status"] == "ACTIVE"

    refused = cloud.api.post(f"/v2.1/servers/{sid}/action",
                             {"os-migrateLive": {"host": None, "block_migration": "auto"}},
                             version="2.30", **_as(demo))  # fmt: skip
    assert refused.status_code == 403, refused.text
    live(second, second)
    moved = _only_attachment(cloud, cinder, sid, data, second, original)
    live(None, first)  # the scheduler's choice: the only other host
    _only_attachment(cloud, cinder, sid, data, first, moved)

    path = f"/v2.1/servers/{sid}/os-volume_attachments/{data}"
    assert cloud.api.delete(path, **_as(demo)).status_code == 202
    _until(lambda: cinder.adapter.get(demo, data).status == "available", "detached")
    assert _attachments_of(cinder.adapter, data) == []


def _multiattach_type(cinder: Cinder) -> str:
    """Cinder's ``multiattach`` type (``multiattach="<is> True"``), made by the ``[cinder]``
    admin when missing. The script's back end reports the capability (decision 0075)."""
    admin = VolumeContext(None, None, True)
    types = cinder.adapter._call(admin, "GET", "/types?is_public=None", None)["volume_types"]
    if not any(t["name"] == "multiattach" for t in types):
        body = {"volume_type": {"name": "multiattach",
                                "extra_specs": {"multiattach": "<is> True"}}}  # fmt: skip
        cinder.adapter._call(admin, "POST", "/types", None, body)
    return "multiattach"


def test_a_multiattach_volume_on_two_servers(cinder_cloud: Cloud, cinder: Cinder) -> None:
    """One multiattach Cinder volume on two servers (2.60+; 2.59 refused), detached from one
    (the other's attachment stays, the volume in-use), freed by the other's delete. (A
    non-multiattach in-use volume refused on a second server: the first test.)"""
    cloud, demo = cinder_cloud, cinder.demo
    first, second = _boot(cloud, demo, "shared-1"), _boot(cloud, demo, "shared-2")
    shared = cinder.volume(name="shared", volume_type=_multiattach_type(cinder))
    assert shared.multiattach

    def servers() -> set[str]:
        volume = cinder.adapter.get(demo, shared.id)
        return {a.server_id for a in volume.attachments} if volume.status == "in-use" else set()

    body = {"volumeAttachment": {"volumeId": shared.id}}
    old = cloud.api.post(f"/v2.1/servers/{first}/os-volume_attachments", body, version="2.59",
                         **_as(demo))  # fmt: skip
    assert old.status_code == 400, old.text
    assert old.json()["badRequest"]["message"] == (
        "Multiattach volumes are only supported starting with compute API version 2.60."
    )
    assert _attachments_of(cinder.adapter, shared.id) == []

    assert _attach(cloud, demo, first, shared.id).status_code == 200
    _until(lambda: servers() == {first}, "attached to the first server")
    assert _attach(cloud, demo, second, shared.id).status_code == 200
    _until(lambda: servers() == {first, second}, "attached to both servers")
    assert shared.id in _guest_volumes(cloud, first) & _guest_volumes(cloud, second)
    again = _attach(cloud, demo, first, shared.id)
    assert again.status_code == 400, again.text
    assert again.json()["badRequest"]["message"] == (
        f"Invalid volume: volume {shared.id} already attached"
    )

    path = f"/v2.1/servers/{first}/os-volume_attachments/{shared.id}"
    assert cloud.api.delete(path, **_as(demo)).status_code == 202
    _until(lambda: servers() == {second}, "only the second server's attachment left")
    _until(lambda: _guest_volumes(cloud, first) == set(), "the first guest to lose it")
    assert cinder.adapter.get(demo, shared.id).status == "in-use"
    assert shared.id in _guest_volumes(cloud, second)

    assert cloud.api.delete(f"/v2.1/servers/{second}", **_as(demo)).status_code == 204
    cloud.wait(second, gone=True)
    _until(lambda: cinder.adapter.get(demo, shared.id).status == "available", "available again")
    assert cinder.adapter.get(demo, shared.id).attachments == ()
    assert _attachments_of(cinder.adapter, shared.id) == []
