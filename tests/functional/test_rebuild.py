"""The rebuild server action across every role, on both transports: the API checks and saves
the new image, name, metadata, key pair...; the conductor hands the rebuild to the server's
host; compute defines the guest again (task states rebuilding -> rebuild_block_device_mapping
-> rebuild_spawning), ACTIVE, or SHUTOFF for a server that was stopped; ERROR with a fault when
the hypervisor fails."""

from __future__ import annotations

from typing import Any

from openkeel.virt.errors import PermanentDriverError
from tests.functional.conftest import IMAGE, Cloud


def _rebuild(cloud: Cloud, sid: str, body: dict[str, Any], version: str = "2.1") -> Any:
    return cloud.api.post(f"/v2.1/servers/{sid}/action", {"rebuild": body}, version=version)


def _error(resp: Any, status: int, message: str) -> None:
    assert resp.status_code == status, resp.text
    (fault,) = resp.json().values()
    assert fault["message"] == message


def _record_spawns(cloud: Cloud) -> list[Any]:
    """The InstanceSpecs the (only) compute host's driver is asked to spawn from now on."""
    (service,) = cloud.computes.values()
    spawned: list[Any] = []
    original_spawn = service.host.driver.spawn

    def spawn(spec: Any, **kw: Any) -> None:
        spawned.append(spec)
        original_spawn(spec, **kw)

    service.host.driver.spawn = spawn  # type: ignore[method-assign]
    return spawned


def test_rebuild_defines_the_guest_again_with_the_new_fields(cloud: Cloud) -> None:
    sid = cloud.boot("r-1", metadata={"old": "1"})["id"]
    first = cloud.wait(sid)
    assert first["status"] == "ACTIVE"
    spawned = _record_spawns(cloud)
    body = {"imageRef": IMAGE, "name": "r-1-new", "metadata": {"new": "2"}, "adminPass": "s3cret",
            "description": "rebuilt", "accessIPv4": "192.0.2.9"}  # fmt: skip
    resp = _rebuild(cloud, sid, body, version="2.19")
    assert resp.status_code == 202, resp.text
    answered = resp.json()["server"]
    assert (answered["name"], answered["adminPass"], answered["status"]) == ("r-1-new", "s3cret", "REBUILD")  # fmt: skip
    assert answered["metadata"] == {"new": "2"} and answered["description"] == "rebuilt"
    server = cloud.wait(sid)
    assert (server["status"], server["OS-EXT-STS:power_state"]) == ("ACTIVE", 1)
    assert (server["name"], server["metadata"], server["accessIPv4"]) == ("r-1-new", {"new": "2"}, "192.0.2.9")  # fmt: skip
    assert server["image"]["id"] == IMAGE
    assert server["OS-SRV-USG:launched_at"] >= first["OS-SRV-USG:launched_at"]
    assert [s.hostname for s in spawned] == [server["OS-EXT-SRV-ATTR:hostname"]]  # one new guest
    assert cloud.events(sid, "rebuild") == {
        "conductor_rebuild_instance": "Success",
        "compute_rebuild_instance": "Success",
    }


def test_rebuild_of_a_stopped_server_leaves_it_stopped(cloud: Cloud) -> None:
    sid = cloud.boot("r-2")["id"]
    assert cloud.wait(sid)["status"] == "ACTIVE"
    assert cloud.api.post(f"/v2.1/servers/{sid}/action", {"os-stop": None}).status_code == 202
    assert cloud.wait(sid)["status"] == "SHUTOFF"
    assert _rebuild(cloud, sid, {"imageRef": IMAGE}).status_code == 202
    server = cloud.wait(sid)
    assert (server["status"], server["OS-EXT-STS:power_state"]) == ("SHUTOFF", 4)


def test_rebuild_refusals(cloud: Cloud) -> None:
    sid = cloud.boot("r-3")["id"]
    assert cloud.wait(sid)["status"] == "ACTIVE"
    _error(_rebuild(cloud, sid, {"imageRef": "5b0e1b1e-0000-4000-8000-000000000000"}), 400,
           "Can not find requested image")  # fmt: skip
    _error(_rebuild(cloud, sid, {"imageRef": IMAGE, "key_name": "nope"}, "2.54"), 400,
           "Invalid key_name provided.")  # fmt: skip
    resp = _rebuild(cloud, sid, {"imageRef": IMAGE, "key_name": "nope"}, "2.53")
    assert resp.status_code == 400 and "Additional properties are not allowed" in resp.text
    assert cloud.api.post(f"/v2.1/servers/{sid}/action", {"pause": None}).status_code == 202
    assert cloud.wait(sid)["status"] == "PAUSED"
    _error(_rebuild(cloud, sid, {"imageRef": IMAGE}), 409,
           f"Cannot 'rebuild' instance {sid} while it is in vm_state paused")  # fmt: skip
    assert _rebuild(cloud, "0d8a6a4c-1111-4a5a-9f32-2b1d1e8c0000", {"imageRef": IMAGE}).status_code == 404  # fmt: skip


def test_rebuild_with_a_key_pair_and_user_data(cloud: Cloud) -> None:
    keypair = {"keypair": {"name": "k1"}}
    assert cloud.api.post("/v2.1/os-keypairs", keypair, version="2.1").status_code == 200
    sid = cloud.boot("r-4")["id"]
    assert cloud.wait(sid)["status"] == "ACTIVE"
    body = {"imageRef": IMAGE, "key_name": "k1", "user_data": "aGVsbG8="}
    assert _rebuild(cloud, sid, body, "2.57").status_code == 202
    server = cloud.wait(sid)
    assert server["key_name"] == "k1"
    shown = cloud.api.get(f"/v2.1/servers/{sid}", version="2.57").json()["server"]
    assert shown["OS-EXT-SRV-ATTR:user_data"] == "aGVsbG8="


def test_failed_rebuild_puts_the_server_in_error(cloud: Cloud) -> None:
    (service,) = cloud.computes.values()
    sid = cloud.boot("r-5")["id"]
    assert cloud.wait(sid)["status"] == "ACTIVE"

    def broken(_spec: Any, **_kw: Any) -> None:
        raise PermanentDriverError("image could not be written")

    service.host.driver.spawn = broken  # type: ignore[method-assign, assignment]
    assert _rebuild(cloud, sid, {"imageRef": IMAGE}).status_code == 202
    server = cloud.wait(sid)
    assert server["status"] == "ERROR"
    assert server["fault"]["message"] == "image could not be written"
    assert cloud.events(sid, "rebuild")["compute_rebuild_instance"] == "Error"


def _add_image(cloud: Cloud, image_id: str, **properties: str) -> str:
    from openkeel.clients.image import Image
    from openkeel.db.image_catalog import EmbeddedImageCatalog

    catalog = EmbeddedImageCatalog(cloud.services.api_db)
    catalog.install()
    catalog.add(Image(id=image_id, name=image_id[:8], status="active", disk_format="raw",
                      container_format="bare", properties=properties))  # fmt: skip
    return image_id


def test_a_new_image_the_host_cannot_run_is_refused_by_the_scheduler(cloud: Cloud) -> None:
    """Nova's rebuild check: a new image goes through the image filters for the server's own
    host (even a disabled one: ComputeFilter does not judge rebuilds); an image it cannot
    run leaves the old image and the server in ERROR with NoValidHost, and no second guest
    or allocation."""
    sid = cloud.boot("r-6")["id"]
    assert cloud.wait(sid)["status"] == "ACTIVE"
    usage = cloud.usage()
    spawned = _record_spawns(cloud)
    host = cloud.wait(sid)["OS-EXT-SRV-ATTR:host"]
    disable = {"host": host, "binary": "nova-compute"}
    assert cloud.api.put("/v2.1/os-services/disable", disable).status_code == 200
    arm = _add_image(cloud, "7d0b1c3e-1a2b-4c5d-8e9f-000000000001", hw_architecture="armv7l")
    assert _rebuild(cloud, sid, {"imageRef": arm}).status_code == 202
    server = cloud.wait(sid)
    assert server["status"] == "ERROR" and server["image"]["id"] == IMAGE
    assert server["fault"]["message"].startswith("No valid host was found.")
    assert cloud.events(sid, "rebuild")["conductor_rebuild_instance"] == "Error"
    assert spawned == [] and cloud.usage() == usage
    # An image the host runs passes the same check, disabled host or not.
    x86 = _add_image(cloud, "7d0b1c3e-1a2b-4c5d-8e9f-000000000002", hw_architecture="x86_64")
    assert cloud.api.post(f"/v2.1/servers/{sid}/action", {"os-resetState": {"state": "active"}}).status_code == 202  # fmt: skip
    assert _rebuild(cloud, sid, {"imageRef": x86}).status_code == 202
    server = cloud.wait(sid)
    assert (server["status"], server["image"]["id"]) == ("ACTIVE", x86)
    assert [s.uuid for s in spawned] == [sid] and cloud.usage() == usage
