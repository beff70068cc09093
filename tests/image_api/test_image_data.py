"""/image/v2/images/{id}/file: upload, download, and what a cut-off or racing upload leaves."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Iterator
from typing import Any

import pytest

from openkeel.clients.image import Caller
from openkeel.db.image_catalog import DEFAULT_IMAGE
from openkeel.image_api.faults import ClientGone, Gone
from openkeel.image_api.services import image_api_services
from openkeel.image_api.usecases import image_data
from tests.client import ApiClient
from tests.image_api.conftest import ImageCloud
from tests.image_api.test_images import create, error

V2 = "/image/v2"
OCTETS = {"Content-Type": "application/octet-stream"}
DATA = bytes(range(256)) * 1000


def queued(glance: ApiClient) -> str:
    return create(glance, name="d", disk_format="qcow2", container_format="bare")["id"]


def upload(glance: ApiClient, image_id: str, data: bytes = DATA, **kw: Any) -> Any:
    return glance.request("PUT", f"{V2}/images/{image_id}/file", content=data, headers=OCTETS, **kw)


def test_upload_makes_active_with_size_and_hashes_then_downloads(
    glance: ApiClient, cloud: ImageCloud
) -> None:
    image_id = queued(glance)
    assert glance.get(f"{V2}/images/{image_id}/file").status_code == 204
    assert upload(glance, image_id).status_code == 204
    image = glance.get(f"{V2}/images/{image_id}").json()
    assert image["status"] == "active"
    assert image["size"] == len(DATA)
    assert image["checksum"] == hashlib.md5(DATA, usedforsecurity=False).hexdigest()
    assert (image["os_hash_algo"], image["os_hash_value"]) == (
        "sha512",
        hashlib.sha512(DATA).hexdigest(),
    )
    down = glance.get(f"{V2}/images/{image_id}/file")
    assert down.status_code == 200 and down.content == DATA
    assert down.headers["content-md5"] == image["checksum"]
    head = glance.request("HEAD", f"{V2}/images/{image_id}/file")
    assert (head.status_code, head.content) == (200, b"")
    assert head.headers["content-length"] == str(len(DATA))
    assert [p.name for p in cloud.images_dir.iterdir()] == [image_id]


def test_compute_api_sees_the_uploaded_image_active(glance: ApiClient) -> None:
    image_id = queued(glance)
    upload(glance, image_id)
    shown = glance.get(f"/v2.1/images/{image_id}").json()["image"]
    assert shown["status"] == "ACTIVE"


def test_upload_to_an_active_image_is_409(glance: ApiClient) -> None:
    image_id = queued(glance)
    upload(glance, image_id)
    assert "queued" in error(upload(glance, image_id, b"other"), 409)
    assert glance.get(f"{V2}/images/{image_id}/file").content == DATA
    error(upload(glance, DEFAULT_IMAGE.id), 409)


def test_upload_refusals(glance: ApiClient) -> None:
    image_id = queued(glance)
    error(glance.put(f"{V2}/images/{image_id}/file", json={}), 415)
    error(upload(glance, "00000000-0000-0000-0000-000000000000"), 404)
    error(upload(glance, image_id, token="other:other"), 404)
    bare = create(glance, name="no formats")["id"]
    assert "disk_format" in error(upload(glance, bare), 400)
    public = create(glance, name="pub", visibility="public", disk_format="raw",
                    container_format="bare")["id"]  # fmt: skip
    error(upload(glance, public, token="demo:demo"), 403)


async def _cut_off_upload(app: Any, image_id: str) -> list[dict[str, Any]]:
    """PUT .../file whose client sends one chunk and then disconnects."""
    messages = [
        {"type": "http.request", "body": b"x" * 1000, "more_body": True},
        {"type": "http.disconnect"},
    ]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return messages.pop(0)

    async def send(message: dict[str, Any]) -> None:
        sent.append(dict(message))

    scope = {
        "type": "http",
        "method": "PUT",
        "path": f"/image/v2/images/{image_id}/file",
        "query_string": b"",
        "headers": [(b"content-type", b"application/octet-stream"), (b"host", b"t")],
    }
    await app(scope, receive, send)
    return sent


def test_interrupted_upload_stays_queued_and_leaves_no_file(
    glance: ApiClient, cloud: ImageCloud
) -> None:
    image_id = queued(glance)
    asyncio.run(_cut_off_upload(cloud.app, image_id))
    image = glance.get(f"{V2}/images/{image_id}").json()
    assert image["status"] == "queued" and image["size"] is None
    assert list(cloud.images_dir.iterdir()) == []
    assert upload(glance, image_id).status_code == 204  # and it can be uploaded again
    assert glance.get(f"{V2}/images/{image_id}").json()["status"] == "active"


def _chunks_then(action: Any) -> Iterator[bytes]:
    yield b"abc"
    action()
    yield b"def"


def test_failure_while_writing_goes_back_to_queued(glance: ApiClient, cloud: ImageCloud) -> None:
    image_id = queued(glance)
    services = image_api_services(cloud.services.api_db, cloud.images_dir.parent)
    seen: list[str] = []

    def observe_then_fail() -> None:
        seen.append(services.repository.load(image_id).status)
        raise ClientGone("gone")

    with pytest.raises(ClientGone):
        image_data.upload(
            services, Caller("admin", True), image_id, _chunks_then(observe_then_fail)
        )
    assert seen == ["saving"]
    assert services.repository.load(image_id).status == "queued"
    assert list(cloud.images_dir.iterdir()) == []


def test_image_deleted_during_upload_stays_deleted(glance: ApiClient, cloud: ImageCloud) -> None:
    image_id = queued(glance)
    services = image_api_services(cloud.services.api_db, cloud.images_dir.parent)

    def delete() -> None:
        assert glance.delete(f"{V2}/images/{image_id}").status_code == 204

    with pytest.raises(Gone):
        image_data.upload(services, Caller("admin", True), image_id, _chunks_then(delete))
    error(glance.get(f"{V2}/images/{image_id}"), 404)
    assert list(cloud.images_dir.iterdir()) == []


def test_restart_puts_saving_images_back_to_queued(glance: ApiClient, cloud: ImageCloud) -> None:
    image_id = queued(glance)
    services = image_api_services(cloud.services.api_db, cloud.images_dir.parent)
    services.repository.update(image_id, {"status": "saving"}, "queued")
    cloud.images_dir.mkdir(exist_ok=True)
    (cloud.images_dir / f".{image_id}.x.part").write_bytes(b"half")
    (cloud.images_dir / "0a1b2c3d-0000-4000-8000-000000000000").write_bytes(b"orphan")
    image_data.recover(services)
    assert services.repository.load(image_id).status == "queued"
    assert list(cloud.images_dir.iterdir()) == []


def test_delete_through_nova_proxy_removes_the_data(glance: ApiClient, cloud: ImageCloud) -> None:
    image_id = queued(glance)
    upload(glance, image_id)
    assert glance.delete(f"/v2.1/images/{image_id}").status_code == 204
    assert list(cloud.images_dir.iterdir()) == []


def test_deactivate_hides_data_from_non_admins_until_reactivated(glance: ApiClient) -> None:
    image_id = create(glance, name="dv", visibility="public", disk_format="raw",
                      container_format="bare")["id"]  # fmt: skip
    actions = f"{V2}/images/{image_id}/actions"
    assert "queued" in error(glance.post(f"{actions}/deactivate"), 403)
    upload(glance, image_id)
    error(glance.post(f"{actions}/deactivate", token="demo:demo"), 403)
    assert glance.post(f"{actions}/deactivate").status_code == 204
    assert glance.post(f"{actions}/deactivate").status_code == 204  # already: no change
    assert glance.get(f"{V2}/images/{image_id}").json()["status"] == "deactivated"
    assert "deactivated" in error(
        glance.get(f"{V2}/images/{image_id}/file", token="demo:demo"), 403
    )
    assert glance.get(f"{V2}/images/{image_id}/file").content == DATA  # admins still may
    assert glance.post(f"{actions}/reactivate").status_code == 204
    assert glance.get(f"{V2}/images/{image_id}/file", token="demo:demo").content == DATA
