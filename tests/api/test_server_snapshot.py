"""createImage and createBackup at the API tier: the image registered in the image service and
its properties, the answer at each microversion (Location before 2.45, body from it), task
state, instance action and the cast; 400/403/409/501 as Nova answers them."""

from __future__ import annotations

from typing import Any

import pytest

from openkeel.api.services import ApiServices
from openkeel.clients.image import Caller, Image
from openkeel.db.image_catalog import EmbeddedImageCatalog
from openkeel.db.repositories import instance_actions, instances
from openkeel.rpc.errors import MessagingError
from tests.api.server_fakes import ADMIN, IMAGE, USER, Recorder, place, placed_server
from tests.api.test_unsent_casts import Unsendable
from tests.client import ApiClient
from tests.conftest import CELL1_UUID

ADMIN_CALLER = Caller("admin", is_admin=True)


@pytest.fixture
def active(api: ApiClient, services: ApiServices, roles: Any) -> str:
    return placed_server(api, services)


def _action(api: ApiClient, sid: str, body: dict[str, Any], version: str = "2.1", token: str = USER) -> Any:  # fmt: skip
    return api.post(f"/v2.1/servers/{sid}/action", json=body, token=token, version=version)


def _images(services: ApiServices) -> list[Image]:
    return EmbeddedImageCatalog(services.api_db).list(ADMIN_CALLER, {})


def _snapshots(services: ApiServices) -> list[Image]:
    return [image for image in _images(services) if image.id != IMAGE]


def _task_and_actions(services: ApiServices, sid: str) -> tuple[str | None, list[str]]:
    with services.cell_dbs[CELL1_UUID].connect() as conn:
        task = instances.get(conn, sid).task_state
        return task, [a.action for a in instance_actions.list_actions(conn, sid)]


def test_create_image_registers_the_image_with_nova_properties(
    api: ApiClient, services: ApiServices, active: str, roles: tuple[Recorder, Recorder]
) -> None:
    body = {"createImage": {"name": "snap", "metadata": {"purpose": "test"}}}
    resp = _action(api, active, body, version="2.44")
    assert resp.status_code == 202, resp.text
    assert resp.content == b""
    (image,) = _snapshots(services)
    assert resp.headers["Location"] == f"http://openkeel.test/image/images/{image.id}"
    assert (image.name, image.status, image.visibility, image.owner) == ("snap", "queued", "private", "demo")  # fmt: skip
    # a snapshot leaves the formats to the upload; min_disk is at least the flavor root disk (Nova)
    assert (image.disk_format, image.container_format, image.min_ram, image.min_disk) == (None, None, 0, 1)  # fmt: skip
    assert image.properties == {
        "base_image_ref": IMAGE, "hw_architecture": "x86_64", "os_distro": "cirros",
        "os_version": "0.6.3", "instance_uuid": active, "user_id": "demo",
        "image_type": "snapshot", "purpose": "test",
    }  # fmt: skip
    assert _task_and_actions(services, active) == ("image_snapshot_pending", ["createImage"])
    name, call = roles[1].calls[-1]
    assert (name, call["host"], call["instance_uuid"], call["image_id"]) == ("snapshot_instance", "host1", active, image.id)  # fmt: skip


@pytest.mark.parametrize("version", ["2.45", "2.96"])
def test_create_image_answers_the_image_id_from_2_45(
    api: ApiClient, services: ApiServices, active: str, version: str
) -> None:
    resp = _action(api, active, {"createImage": {"name": "snap"}}, version=version)
    assert resp.status_code == 202, resp.text
    (image,) = _snapshots(services)
    assert resp.json() == {"image_id": image.id}
    assert "Location" not in resp.headers


def test_an_admin_snapshot_of_a_user_server_is_shared_with_its_project(
    api: ApiClient, services: ApiServices, active: str
) -> None:
    resp = _action(api, active, {"createImage": {"name": "by-admin"}}, token=ADMIN)
    assert resp.status_code == 202, resp.text
    (image,) = _snapshots(services)
    assert (image.visibility, image.owner) == ("shared", "admin")
    assert (image.properties["instance_owner"], image.properties["user_id"]) == ("demo", "admin")
    # the server's project sees it (a pending member, as Glance shares it)
    assert EmbeddedImageCatalog(services.api_db).get(Caller("demo"), image.id).id == image.id


@pytest.mark.parametrize(
    ("changes", "attr", "value"),
    [
        ({"task_state": "rebooting"}, "task_state", "rebooting"),
        ({"vm_state": "error"}, "vm_state", "error"),
        ({"vm_state": "rescued"}, "vm_state", "rescued"),
    ],
)
@pytest.mark.parametrize(("key", "body"), [
    ("createImage", {"name": "s"}),
    ("createBackup", {"name": "b", "backup_type": "daily", "rotation": 1}),
])  # fmt: skip
def test_wrong_state_is_409_and_registers_no_image(
    api: ApiClient, services: ApiServices, roles: tuple[Recorder, Recorder],
    changes: dict[str, Any], attr: str, value: str, key: str, body: dict[str, Any],
) -> None:  # fmt: skip
    from tests.api.server_fakes import create, flavor

    flavor(api)
    sid = create(api)["server"]["id"]
    place(services, sid, **changes)
    resp = _action(api, sid, {key: body})
    assert resp.status_code == 409, resp.text
    assert resp.json()["conflictingRequest"]["message"] == (
        f"Cannot '{key}' instance {sid} while it is in {attr} {value}"
    )
    assert _snapshots(services) == [] and roles[1].calls == []


@pytest.mark.parametrize("vm_state", ["stopped", "paused", "suspended"])
def test_stopped_paused_suspended_and_locked_servers_can_be_snapshot(
    api: ApiClient, services: ApiServices, active: str, vm_state: str
) -> None:
    with services.cell_dbs[CELL1_UUID].begin() as conn:
        from openkeel.domain.instances import InstanceUpdate

        instances.update(conn, active, InstanceUpdate(vm_state=vm_state, locked=True, locked_by="admin"))  # fmt: skip
    assert _action(api, active, {"createImage": {"name": "s"}}).status_code == 202


@pytest.mark.parametrize(("version", "status"), [("2.38", 403), ("2.39", 202)])
@pytest.mark.parametrize("key", ["createImage", "createBackup"])
def test_image_metadata_quota_is_checked_before_2_39(
    api: ApiClient, services: ApiServices, active: str, version: str, status: int, key: str
) -> None:
    services.conf.set_override("metadata_items", 1, group="quota")
    body: dict[str, Any] = {"name": "s", "metadata": {"a": "1", "b": "2"}}
    if key == "createBackup":
        body.update(backup_type="daily", rotation=1)
    resp = _action(api, active, {key: body}, version=version)
    assert resp.status_code == status, resp.text
    if status == 403:
        assert resp.json()["forbidden"]["message"] == "Image metadata limit exceeded"
        assert _snapshots(services) == []


@pytest.mark.parametrize(
    "body",
    [
        {"createImage": {}},
        {"createImage": {"name": "s", "extra": 1}},
        {"createImage": {"name": ""}},
        {"createBackup": {"name": "b", "backup_type": "daily"}},
        {"createBackup": {"name": "b", "rotation": 1}},
        {"createBackup": {"name": "b", "backup_type": "daily", "rotation": -1}},
        {"createBackup": {"name": "b", "backup_type": "daily", "rotation": "x"}},
        {"createBackup": {"name": "b", "backup_type": 1, "rotation": 1}},
    ],
)
def test_bad_bodies_are_400(api: ApiClient, services: ApiServices, active: str, body: Any) -> None:
    assert _action(api, active, body).status_code == 400


def test_create_backup_registers_a_backup_image_and_casts_its_rotation(
    api: ApiClient, services: ApiServices, active: str, roles: tuple[Recorder, Recorder]
) -> None:
    body = {"createBackup": {"name": "nightly", "backup_type": "daily", "rotation": "2"}}
    resp = _action(api, active, body)
    assert resp.status_code == 202, resp.text
    (image,) = _snapshots(services)
    assert resp.headers["Location"] == f"http://openkeel.test/v2.1/images/{image.id}"
    # a backup keeps the source image's formats
    assert (image.name, image.disk_format, image.container_format) == ("nightly", "qcow2", "bare")
    props = image.properties
    assert (props["image_type"], props["backup_type"], props["instance_uuid"]) == ("backup", "daily", active)  # fmt: skip
    assert _task_and_actions(services, active) == ("image_backup", ["createBackup"])
    name, call = roles[1].calls[-1]
    assert (name, call["image_id"], call["backup_type"], call["rotation"]) == ("backup_instance", image.id, "daily", 2)  # fmt: skip


def test_create_backup_with_rotation_0_has_no_location(
    api: ApiClient, services: ApiServices, active: str
) -> None:
    body = {"createBackup": {"name": "b", "backup_type": "weekly", "rotation": 0}}
    resp = _action(api, active, body)
    assert resp.status_code == 202, resp.text
    assert "Location" not in resp.headers
    resp = _action(api, active, {"createBackup": {**body["createBackup"]}}, version="2.45")
    assert resp.status_code == 409  # the first one still holds the task state


def test_create_backup_answers_the_image_id_from_2_45(
    api: ApiClient, services: ApiServices, active: str
) -> None:
    body = {"createBackup": {"name": "b", "backup_type": "weekly", "rotation": 0}}
    resp = _action(api, active, body, version="2.45")
    assert resp.status_code == 202, resp.text
    assert resp.json() == {"image_id": _snapshots(services)[0].id}


def test_volume_backed_servers(api: ApiClient, services: ApiServices, active: str) -> None:
    from openkeel.domain.instances import InstanceUpdate

    with services.cell_dbs[CELL1_UUID].begin() as conn:
        instances.update(conn, active, InstanceUpdate(image_ref=""))
    backup = {"createBackup": {"name": "b", "backup_type": "daily", "rotation": 1}}
    resp = _action(api, active, backup)
    assert resp.status_code == 400, resp.text
    assert resp.json()["badRequest"]["message"] == "Backup is not supported for volume-backed instances."  # fmt: skip
    # Nova's snapshot_volume_backed, in the API: no volume mapped here, so an active image
    # without data or mappings (tests/functional/test_boot_from_volume.py has volumes).
    resp = _action(api, active, {"createImage": {"name": "s"}})
    assert resp.status_code == 202, resp.text
    (image,) = _snapshots(services)
    assert image.status == "active" and image.size == 0
    assert image.properties["root_device_name"] == "/dev/vda"
    assert "block_device_mapping" not in image.properties


def test_an_unsent_snapshot_deletes_its_image_and_clears_the_task(
    api: ApiClient, services: ApiServices, active: str
) -> None:
    services.compute = Unsendable(MessagingError("connection refused"))  # type: ignore[assignment]
    resp = _action(api, active, {"createImage": {"name": "s"}})
    assert resp.status_code == 503, resp.text
    assert _snapshots(services) == []
    assert _task_and_actions(services, active)[0] is None


def test_a_snapshot_after_a_rebuild_copies_the_new_image(
    api: ApiClient, services: ApiServices, active: str
) -> None:
    catalog = EmbeddedImageCatalog(services.api_db)
    catalog.install()
    other = catalog.add(Image(id="0b5b2a52-7c1d-4c8e-9d7e-3c5a4f8e2b11", name="other", status="active",
                              disk_format="raw", container_format="bare", min_ram=64,
                              properties={"os_distro": "debian"}))  # fmt: skip
    _set_task(services, active, None)
    resp = _action(api, active, {"rebuild": {"imageRef": other.id}})
    assert resp.status_code == 202, resp.text
    _set_task(services, active, None)  # as compute would once rebuilt
    assert _action(api, active, {"createImage": {"name": "after"}}).status_code == 202
    (image,) = [i for i in _snapshots(services) if i.name == "after"]
    props = image.properties
    assert (props["base_image_ref"], props["os_distro"]) == (other.id, "debian")
    assert "hw_architecture" not in props and "os_version" not in props
    assert (image.min_ram, image.min_disk) == (64, 1)  # the new image's; the root disk's size


def _set_task(services: ApiServices, sid: str, task: str | None) -> None:
    from openkeel.domain.instances import InstanceUpdate

    with services.cell_dbs[CELL1_UUID].begin() as conn:
        instances.update(conn, sid, InstanceUpdate(task_state=task))
