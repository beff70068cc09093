"""Servers with volumes (a volume root and an attached data volume) moved to another host, on
both transports: resize + confirm, resize + revert, cold migration, live migration (and one
failing, rolled back), shelve offload + unshelve on another host, evacuation from a host forced
down. After each: every volume has exactly one attachment, completed, for the server's host
with that host's connector; the server lists its volumes; the guest on the host has them; a
failure leaves no second attachment; a delete afterwards gives every volume back."""

from __future__ import annotations

from typing import Any

import pytest

from openkeel.compute.service import ComputeService
from openkeel.virt.errors import PermanentDriverError
from openkeel.virt.fake import FakeDriver
from tests.functional.conftest import Cloud
from tests.functional.test_boot_from_volume import (
    _attachments,
    _boot,
    _root,
    _service,
    _until,
    _volume,
    _volumes,
)
from tests.functional.test_evacuate import _evacuate, _force_down
from tests.functional.test_live_migration import _live, _wait_migration
from tests.functional.test_resize import _action, _settled

ADMIN = "admin:admin"


def _host(cloud: Cloud, sid: str) -> str:
    host: str = cloud.wait(sid)["OS-EXT-SRV-ATTR:host"]
    return host


def _server_with_volumes(cloud: Cloud) -> tuple[str, list[str]]:
    """A server booted from a volume on the first host, with a data volume attached."""
    (first,) = cloud.computes
    root, data = _volume(cloud), _volume(cloud, bootable=False)
    resp = _boot(cloud, [_root(root)], availability_zone=f"nova:{first}")
    assert resp.status_code == 202, resp.text
    sid = resp.json()["server"]["id"]
    assert cloud.wait(sid)["status"] == "ACTIVE"
    attach = {"volumeAttachment": {"volumeId": data}}
    resp = cloud.api.post(f"/v2.1/servers/{sid}/os-volume_attachments", attach, version="2.79")
    assert resp.status_code == 200, resp.text
    _until(lambda: _volumes(cloud)[data] == "in-use", "the data volume attached")
    _attached_on(cloud, sid, first, [root, data])
    return sid, [root, data]


def _guest_volumes(cloud: Cloud, host: str, sid: str) -> set[str]:
    driver = cloud.computes[host].host.driver
    assert isinstance(driver, FakeDriver)
    if sid not in driver.list_instance_uuids():
        return set()
    return set(driver._guest(sid).volumes)


def _attached_on(cloud: Cloud, sid: str, host: str, vids: list[str]) -> None:
    """Each volume: one attachment, attached, for ``host`` with its connector; the server
    lists them; the guest on ``host`` has them (and no other host's guest)."""
    service = _service(cloud)
    for vid in vids:
        (attachment,) = service.attachments_of(vid)
        assert attachment["instance_uuid"] == sid
        assert attachment["status"] == "attached", attachment
        assert attachment["host_name"] == host
        assert attachment["connector"]["host"] == host
        assert attachment["connector"]["initiator"].endswith(f":{host}")
        assert _volumes(cloud)[vid] == "in-use"
    listed = cloud.api.get(f"/v2.1/servers/{sid}/os-volume_attachments").json()
    assert sorted(a["volumeId"] for a in listed["volumeAttachments"]) == sorted(vids)
    assert _guest_volumes(cloud, host, sid) == set(vids)
    for other in cloud.computes:
        if other != host:
            assert _guest_volumes(cloud, other, sid) == set()
    # the mappings name the attachments Cinder has (what a delete will remove)
    named = {a["attachment_id"] for a in _bdm_attachments(cloud, sid)}
    assert named == {a["id"] for a in _attachments(cloud) if a["volume_id"] in vids}


def _bdm_attachments(cloud: Cloud, sid: str) -> list[dict[str, Any]]:
    from openkeel.db.repositories import block_devices
    from tests.conftest import CELL1_UUID

    with cloud.services.cell_dbs[CELL1_UUID].connect() as conn:
        return [{"attachment_id": m.attachment_id} for m in block_devices.volumes_of(conn, sid)]


def _deleted_gives_back(cloud: Cloud, sid: str, vids: list[str]) -> None:
    assert cloud.api.delete(f"/v2.1/servers/{sid}").status_code == 204
    cloud.wait(sid, gone=True)
    _until(lambda: all(_volumes(cloud)[v] == "available" for v in vids), "volumes given back")
    assert _attachments(cloud) == []


def test_resize_confirm_and_revert_move_the_attachments(cloud: Cloud) -> None:
    sid, vids = _server_with_volumes(cloud)
    source = _host(cloud, sid)
    cloud.add_compute()
    _action(cloud, sid, {"resize": {"flavorRef": "2"}})
    server = cloud.wait(sid)
    assert server["status"] == "VERIFY_RESIZE", server.get("fault")
    dest = server["OS-EXT-SRV-ATTR:host"]
    assert dest != source
    _attached_on(cloud, sid, dest, vids)
    _action(cloud, sid, {"revertResize": None})
    server = cloud.wait(sid)
    assert (server["status"], server["OS-EXT-SRV-ATTR:host"]) == ("ACTIVE", source)
    _attached_on(cloud, sid, source, vids)
    _action(cloud, sid, {"resize": {"flavorRef": "2"}})
    assert cloud.wait(sid)["status"] == "VERIFY_RESIZE"
    _action(cloud, sid, {"confirmResize": None}, status=204)
    server = _settled(cloud, sid)
    assert (server["status"], server["OS-EXT-SRV-ATTR:host"]) == ("ACTIVE", dest)
    _attached_on(cloud, sid, dest, vids)
    _deleted_gives_back(cloud, sid, vids)


def test_cold_migrate_moves_the_attachments(cloud: Cloud) -> None:
    sid, vids = _server_with_volumes(cloud)
    source = _host(cloud, sid)
    cloud.add_compute()
    _action(cloud, sid, {"migrate": None})
    assert cloud.wait(sid)["status"] == "VERIFY_RESIZE"
    _action(cloud, sid, {"confirmResize": None}, status=204)
    server = _settled(cloud, sid)
    assert server["status"] == "ACTIVE"
    assert server["OS-EXT-SRV-ATTR:host"] != source
    _attached_on(cloud, sid, server["OS-EXT-SRV-ATTR:host"], vids)
    _deleted_gives_back(cloud, sid, vids)


def _break(service: ComputeService, operation: str) -> None:
    def broken(*_a: Any, **_kw: Any) -> None:
        raise PermanentDriverError(f"{operation} broke")

    setattr(service.host.driver, operation, broken)


def test_a_resize_failing_on_the_destination_leaves_one_attachment(cloud: Cloud) -> None:
    sid, vids = _server_with_volumes(cloud)
    dest = cloud.add_compute()
    _break(dest, "finish_migration")
    _action(cloud, sid, {"resize": {"flavorRef": "2"}})
    server = cloud.wait(sid)
    assert (server["status"], server["OS-EXT-SRV-ATTR:host"]) == ("ERROR", dest.hostname)
    for vid in vids:  # still the server's: one attachment each, none leaked
        assert len(_service(cloud).attachments_of(vid)) == 1
    _deleted_gives_back(cloud, sid, vids)


def test_live_migration_moves_the_attachments(cloud: Cloud) -> None:
    sid, vids = _server_with_volumes(cloud)
    source = _host(cloud, sid)
    dest = cloud.add_compute()
    _live(cloud, sid, {"host": dest.hostname, "block_migration": "auto"}, "2.68")
    _wait_migration(cloud, sid, "completed")
    server = cloud.wait(sid)
    assert (server["status"], server["OS-EXT-SRV-ATTR:host"]) == ("ACTIVE", dest.hostname)
    assert source != dest.hostname
    _attached_on(cloud, sid, dest.hostname, vids)
    _deleted_gives_back(cloud, sid, vids)


@pytest.mark.parametrize("broken", ["live_migration", "attachment_complete"])
def test_a_failing_live_migration_keeps_the_source_attachments(cloud: Cloud, broken: str) -> None:
    """The driver failing (after the destination attached the volumes), or the destination's
    attaching failing: the server stays on the source with its attachments only."""
    sid, vids = _server_with_volumes(cloud)
    source = _host(cloud, sid)
    dest = cloud.add_compute()
    if broken == "live_migration":
        _break(cloud.computes[source], "live_migration")
    else:
        volumes = dest.host.volumes
        assert volumes is not None

        class Refusing:
            def __getattr__(self, name: str) -> Any:
                if name == "attachment_complete":
                    raise PermanentDriverError("Cinder refused")  # raised when looked up
                return getattr(volumes, name)

        object.__setattr__(dest.host, "volumes", Refusing())
    _live(cloud, sid, {"host": dest.hostname, "block_migration": "auto"}, "2.68")
    _wait_migration(cloud, sid, "error")
    server = cloud.wait(sid)
    assert (server["status"], server["OS-EXT-SRV-ATTR:host"]) == ("ACTIVE", source)
    _attached_on(cloud, sid, source, vids)
    _deleted_gives_back(cloud, sid, vids)


def _disable(cloud: Cloud, host: str) -> None:
    services = cloud.api.get(f"/v2.1/os-services?host={host}", version="2.53").json()
    path = f"/v2.1/os-services/{services['services'][0]['id']}"
    assert cloud.api.put(path, {"status": "disabled"}, version="2.53").status_code == 200


def test_shelve_offload_and_unshelve_on_another_host(cloud: Cloud) -> None:
    sid, vids = _server_with_volumes(cloud)
    source = _host(cloud, sid)
    assert _action_ok(cloud, sid, {"shelve": None})
    server = cloud.wait(sid)
    assert (server["status"], server["OS-EXT-SRV-ATTR:host"]) == ("SHELVED_OFFLOADED", None)
    for vid in vids:  # reserved for the server, connected to no host
        (attachment,) = _service(cloud).attachments_of(vid)
        assert (attachment["instance_uuid"], attachment["connector"]) == (sid, {})
        assert _volumes(cloud)[vid] == "reserved"
    assert _guest_volumes(cloud, source, sid) == set()
    other = cloud.add_compute()
    _disable(cloud, source)
    # the first unshelve fails on the other host: the volumes stay reserved, nothing leaked
    original = other.host.driver.spawn
    _break(other, "spawn")
    assert _action_ok(cloud, sid, {"unshelve": None})
    assert cloud.wait(sid)["status"] == "SHELVED_OFFLOADED"
    for vid in vids:
        (attachment,) = _service(cloud).attachments_of(vid)
        assert attachment["connector"] == {}
    other.host.driver.spawn = original  # type: ignore[method-assign]
    assert _action_ok(cloud, sid, {"unshelve": None})
    server = cloud.wait(sid)
    assert (server["status"], server["OS-EXT-SRV-ATTR:host"]) == ("ACTIVE", other.hostname)
    _attached_on(cloud, sid, other.hostname, vids)
    _deleted_gives_back(cloud, sid, vids)


def _action_ok(cloud: Cloud, sid: str, body: dict[str, Any]) -> bool:
    resp = cloud.api.post(f"/v2.1/servers/{sid}/action", body)
    return bool(resp.status_code == 202)


def test_evacuate_from_a_host_forced_down(cloud: Cloud) -> None:
    sid, vids = _server_with_volumes(cloud)
    source_host = _host(cloud, sid)
    target = cloud.add_compute()
    source = cloud.computes[source_host]
    source.stop()  # the host dies
    _force_down(cloud, source_host)
    assert _evacuate(cloud, sid, {}).status_code == 200
    server = cloud.wait(sid)
    assert (server["status"], server["OS-EXT-SRV-ATTR:host"]) == ("ACTIVE", target.hostname)
    del cloud.computes[source_host]  # its old guest is still defined on the dead hypervisor
    _attached_on(cloud, sid, target.hostname, vids)
    _deleted_gives_back(cloud, sid, vids)


@pytest.fixture
def same_zone_only(cloud: Cloud) -> Any:
    conf = cloud.services.conf
    conf.set_override("cross_az_attach", False, group="cinder")
    yield
    conf.clear_override("cross_az_attach", group="cinder")


def _in_zone(cloud: Cloud, vid: str, zone: str) -> str:
    _service(cloud).store.update("volumes", vid, {"availability_zone": zone})
    return vid


@pytest.mark.usefixtures("same_zone_only")
def test_cross_az_attach_false_at_create(cloud: Cloud) -> None:
    (host,) = cloud.computes
    far = _in_zone(cloud, _volume(cloud), "az2")
    refused = _boot(cloud, [_root(far)], availability_zone="nova")
    assert refused.status_code == 400, refused.text
    assert refused.json()["badRequest"]["message"] == (
        "The availability zone between the server and its attached volumes do not match: "
        "Server and volumes are not in the same availability zone. Server is in: nova. "
        "Volumes are in: az2."
    )
    near = _volume(cloud)
    mixed = _boot(cloud, [_root(near), {**_root(far), "boot_index": 1}])
    assert mixed.status_code == 400, mixed.text
    assert mixed.json()["badRequest"]["message"] == (
        "The availability zone between the server and its attached volumes do not match: "
        "Volumes are in different availability zones: nova,az2."
    )
    assert _attachments(cloud) == []
    # no zone asked for: the server takes the volume's zone
    made = cloud.api.post("/v2.1/os-aggregates",
                          {"aggregate": {"name": "far", "availability_zone": "az2"}})  # fmt: skip
    assert made.status_code == 200, made.text
    added = cloud.api.post(f"/v2.1/os-aggregates/{made.json()['aggregate']['id']}/action",
                           {"add_host": {"host": host}})  # fmt: skip
    assert added.status_code == 200, added.text
    resp = _boot(cloud, [_root(far)])
    assert resp.status_code == 202, resp.text
    server = cloud.wait(resp.json()["server"]["id"])
    assert server["status"] == "ACTIVE", server.get("fault")
    assert server["OS-EXT-AZ:availability_zone"] == "az2"
    # a volume in the server's own default zone is fine without pinning
    plain = _boot(cloud, [_root(_volume(cloud))])
    assert plain.status_code == 202, plain.text


def test_cross_az_attach_at_attach(cloud: Cloud) -> None:
    sid = cloud.wait(cloud.boot("az")["id"])["id"]
    far = _in_zone(cloud, _volume(cloud, bootable=False), "az2")
    path = f"/v2.1/servers/{sid}/os-volume_attachments"
    body = {"volumeAttachment": {"volumeId": far}}
    cloud.services.conf.set_override("cross_az_attach", False, group="cinder")
    try:
        refused = cloud.api.post(path, body, version="2.79")
    finally:
        cloud.services.conf.clear_override("cross_az_attach", group="cinder")
    assert refused.status_code == 400, refused.text
    assert refused.json()["badRequest"]["message"] == (
        f"Invalid volume: Instance {sid} and volume {far} are not in the same "
        "availability_zone. Instance is in nova. Volume is in az2"
    )
    assert _volumes(cloud)[far] == "available"
    # the default (True): attached across zones
    assert cloud.api.post(path, body, version="2.79").status_code == 200
    _until(lambda: _volumes(cloud)[far] == "in-use", "the volume attached")


def test_attach_and_detach_while_shelved_offloaded(cloud: Cloud) -> None:
    """Nova completes an attachment made while the server has no host (no connector), so the
    volume is in-use by the server at once (tempest waits for that); unshelve connects it on
    the new host; a detach while offloaded gives it back."""
    sid = cloud.boot("offloaded")["id"]
    assert cloud.wait(sid)["status"] == "ACTIVE"
    assert _action_ok(cloud, sid, {"shelve": None})
    assert cloud.wait(sid)["status"] == "SHELVED_OFFLOADED"
    kept, dropped = _volume(cloud, bootable=False), _volume(cloud, bootable=False)
    for vid in (kept, dropped):
        attach = {"volumeAttachment": {"volumeId": vid}}
        resp = cloud.api.post(f"/v2.1/servers/{sid}/os-volume_attachments", attach)
        assert resp.status_code == 200, resp.text
        (attachment,) = _service(cloud).attachments_of(vid)
        assert (attachment["status"], attachment["connector"]) == ("attached", {})
        assert _volumes(cloud)[vid] == "in-use"
    resp = cloud.api.delete(f"/v2.1/servers/{sid}/os-volume_attachments/{dropped}")
    assert resp.status_code == 202, resp.text
    assert _volumes(cloud)[dropped] == "available"
    assert _service(cloud).attachments_of(dropped) == []
    assert _action_ok(cloud, sid, {"unshelve": None})
    host = _host(cloud, sid)
    assert cloud.wait(sid)["status"] == "ACTIVE"
    (attachment,) = _service(cloud).attachments_of(kept)
    assert (attachment["status"], attachment["connector"]["host"]) == ("attached", host)
    assert _guest_volumes(cloud, host, sid) == {kept}
    _deleted_gives_back(cloud, sid, [kept, dropped])
