"""The /images proxy on the embedded catalog: views, filters, paging, delete, versions."""

from __future__ import annotations

import datetime

import pytest

from openkeel.api.services import ApiServices
from openkeel.clients.image import Image
from openkeel.db.image_catalog import DEFAULT_IMAGE, EmbeddedImageCatalog
from tests.client import ApiClient

SNAP = "6b2a4a1e-0a9f-4a55-9d0f-0d8ad1d5c0a1"
SERVER = "0c9f8a61-3e4c-4a3f-b4d2-6d0c1b3f5e11"
T0 = datetime.datetime(2025, 1, 2, 3, 4, 5)


@pytest.fixture
def catalog(services: ApiServices) -> EmbeddedImageCatalog:
    catalog = EmbeddedImageCatalog(services.api_db)
    catalog.install()
    catalog.add(
        Image(
            id=SNAP,
            name="snap",
            status="queued",
            visibility="private",
            owner="demo",
            min_ram=512,
            min_disk=1,
            size=1024,
            created_at=T0,
            updated_at=T0,
            properties={"instance_uuid": SERVER, "image_type": "snapshot", "auto_disk_config": "0"},
        )
    )
    return catalog


def test_show_snapshot_view(api: ApiClient, catalog: EmbeddedImageCatalog) -> None:
    resp = api.get(f"/v2.1/images/{SNAP}", token="demo:demo")
    assert resp.status_code == 200
    image = resp.json()["image"]
    assert {k: image[k] for k in ("status", "progress", "minRam", "minDisk", "created")} == {
        "status": "SAVING",
        "progress": 25,
        "minRam": 512,
        "minDisk": 1,
        "created": "2025-01-02T03:04:05Z",
    }
    assert image["OS-DCF:diskConfig"] == "MANUAL"
    assert image["OS-EXT-IMG-SIZE:size"] == 1024
    assert image["server"] == {
        "id": SERVER,
        "links": [
            {"rel": "self", "href": f"http://openkeel.test/v2.1/servers/{SERVER}"},
            {"rel": "bookmark", "href": f"http://openkeel.test/servers/{SERVER}"},
        ],
    }


def test_private_image_hidden_from_other_projects(
    api: ApiClient, catalog: EmbeddedImageCatalog
) -> None:
    resp = api.get(f"/v2.1/images/{SNAP}", token="other:other")
    assert resp.status_code == 404
    assert resp.json() == {"itemNotFound": {"code": 404, "message": "Image not found."}}
    ids = [i["id"] for i in api.get("/v2.1/images", token="other:other").json()["images"]]
    assert ids == [DEFAULT_IMAGE.id]


def test_list_newest_first_and_default_image(api: ApiClient, catalog: EmbeddedImageCatalog) -> None:
    body = api.get("/v2.1/images/detail", token="demo:demo").json()
    assert [i["id"] for i in body["images"]] == [SNAP, DEFAULT_IMAGE.id]
    cirros = body["images"][1]
    assert cirros["name"] == "cirros-0.6.3-x86_64-disk"
    assert cirros["status"] == "ACTIVE" and cirros["progress"] == 100
    assert "OS-DCF:diskConfig" not in cirros and "server" not in cirros
    assert "images_links" not in body


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("server=http://x/servers/" + SERVER, [SNAP]),
        ("server=" + SERVER, [SNAP]),
        ("type=snapshot", [SNAP]),
        ("status=SAVING", []),
        ("status=QUEUED", [SNAP]),
        ("status=active", [DEFAULT_IMAGE.id]),
        ("name=snap", [SNAP]),
        ("minRam=512", [SNAP]),
        ("property-os_distro=cirros", [DEFAULT_IMAGE.id]),
        ("changes-since=2025-01-01T00:00:00Z", [SNAP]),
        ("unknown=1", [SNAP, DEFAULT_IMAGE.id]),
    ],
)
def test_filters(
    api: ApiClient, catalog: EmbeddedImageCatalog, query: str, expected: list[str]
) -> None:
    resp = api.get(f"/v2.1/images?{query}", token="demo:demo")
    assert resp.status_code == 200
    assert [i["id"] for i in resp.json()["images"]] == expected


def test_paging(api: ApiClient, catalog: EmbeddedImageCatalog) -> None:
    body = api.get("/v2.1/images/detail?limit=1&name=snap", token="demo:demo").json()
    assert body["images_links"] == [
        {
            "rel": "next",
            "href": f"http://openkeel.test/v2.1/images/detail?limit=1&name=snap&marker={SNAP}",
        }
    ]
    page2 = api.get(f"/v2.1/images?limit=1&marker={SNAP}", token="demo:demo").json()
    assert [i["id"] for i in page2["images"]] == [DEFAULT_IMAGE.id]


@pytest.mark.parametrize("limit", ["0", "-1", "abc"])
def test_bad_limit(api: ApiClient, limit: str) -> None:
    resp = api.get(f"/v2.1/images?limit={limit}", token="demo:demo")
    assert resp.status_code == 400


def test_unknown_marker(api: ApiClient) -> None:
    resp = api.get("/v2.1/images?marker=nope", token="demo:demo")
    assert resp.status_code == 400
    assert resp.json()["badRequest"]["message"] == "Invalid marker. Image nope could not be found."


@pytest.mark.parametrize("since", ["(((", "None", "2026-13-45T99:99:99"])
@pytest.mark.parametrize("path", ["/v2.1/images", "/v2.1/images/detail"])
def test_unparseable_changes_since(api: ApiClient, path: str, since: str) -> None:
    """Glance refuses a time it cannot parse with a 400; the catalog raised ValueError, a
    500 (found by tests/fuzz)."""
    resp = api.get(f"{path}?changes-since={since}", token="demo:demo")
    assert resp.status_code == 400, resp.text
    message = resp.json()["badRequest"]["message"]
    assert message == f"Invalid time format for updated_at: {since}"


def test_delete(api: ApiClient, catalog: EmbeddedImageCatalog) -> None:
    resp = api.delete(f"/v2.1/images/{DEFAULT_IMAGE.id}", token="demo:demo")
    assert resp.status_code == 403
    assert resp.json() == {
        "forbidden": {"code": 403, "message": "You are not allowed to delete the image."}
    }
    assert api.delete(f"/v2.1/images/{SNAP}", token="demo:demo").status_code == 204
    assert api.get(f"/v2.1/images/{SNAP}", token="demo:demo").status_code == 404
    assert api.delete(f"/v2.1/images/{SNAP}", token="demo:demo").status_code == 404


@pytest.mark.parametrize("method", ["GET", "DELETE"])
def test_gone_after_2_35(api: ApiClient, method: str) -> None:
    path = f"/v2.1/images/{DEFAULT_IMAGE.id}"
    assert api.request(method, path, token="admin:admin", version="2.35").status_code < 300
    resp = api.request(method, path, token="admin:admin", version="2.36")
    assert resp.status_code == 404
    resp = api.get("/v2.1/images/detail", token="admin:admin", version="2.36")
    assert resp.status_code == 404
