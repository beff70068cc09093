"""/images/{image_id}/metadata on the embedded catalog: merge, replace, one key, quota."""

from __future__ import annotations

from openkeel.api.services import ApiServices
from openkeel.db.image_catalog import DEFAULT_IMAGE
from tests.client import ApiClient

META = f"/v2.1/images/{DEFAULT_IMAGE.id}/metadata"
ADMIN = "admin:admin"


def test_list_and_show(api: ApiClient) -> None:
    resp = api.get(META, token="demo:demo")
    assert resp.status_code == 200
    assert resp.json() == {"metadata": DEFAULT_IMAGE.properties}
    assert api.get(f"{META}/os_distro", token="demo:demo").json() == {
        "meta": {"os_distro": "cirros"}
    }
    missing = api.get(f"{META}/nope", token="demo:demo")
    assert missing.status_code == 404
    assert missing.json()["itemNotFound"]["message"] == "The resource could not be found."


def test_create_merges_and_put_replaces(api: ApiClient) -> None:
    resp = api.post(META, json={"metadata": {"os_distro": "x", "Label": "L"}}, token=ADMIN)
    assert resp.status_code == 200
    assert resp.json() == {"metadata": {**DEFAULT_IMAGE.properties, "os_distro": "x", "Label": "L"}}
    resp = api.put(META, json={"metadata": {"a": "1"}}, token=ADMIN)
    assert resp.json() == {"metadata": {"a": "1"}}
    assert api.get(META, token=ADMIN).json() == {"metadata": {"a": "1"}}


def test_update_and_delete_one_key(api: ApiClient) -> None:
    resp = api.put(f"{META}/k", json={"meta": {"k": "v"}}, token=ADMIN)
    assert (resp.status_code, resp.json()) == (200, {"meta": {"k": "v"}})
    resp = api.put(f"{META}/k", json={"meta": {"other": "v"}}, token=ADMIN)
    assert resp.status_code == 400
    assert resp.json()["badRequest"]["message"] == "Request body and URI mismatch"
    assert api.delete(f"{META}/k", token=ADMIN).status_code == 204
    resp = api.delete(f"{META}/k", token=ADMIN)
    assert resp.status_code == 404
    assert resp.json()["itemNotFound"]["message"] == "Invalid metadata key"


def test_not_owner_is_forbidden(api: ApiClient) -> None:
    resp = api.post(META, json={"metadata": {"a": "1"}}, token="demo:demo")
    assert resp.status_code == 403
    assert resp.json()["forbidden"]["message"] == f"Not authorized for image {DEFAULT_IMAGE.id}."


def test_unknown_image(api: ApiClient) -> None:
    resp = api.get("/v2.1/images/nope/metadata", token=ADMIN)
    assert resp.status_code == 404
    assert resp.json()["itemNotFound"]["message"] == "Image not found."


def test_quota(tmp_path: object, services: ApiServices, api: ApiClient) -> None:
    services.conf.set_override("metadata_items", 3, group="quota")
    resp = api.post(META, json={"metadata": {"a": "1"}}, token=ADMIN)
    assert resp.status_code == 403
    assert resp.json()["forbidden"]["message"] == "Image metadata limit exceeded"
    resp = api.put(META, json={"metadata": {"a": "1", "b": "2", "c": "3"}}, token=ADMIN)
    assert resp.status_code == 200


def test_bad_body_and_versions(api: ApiClient) -> None:
    assert api.put(f"{META}/k", json={"meta": {}}, token=ADMIN).status_code == 400
    assert api.post(META, json={"metadata": {"k": 1}}, token=ADMIN).status_code == 400
    assert api.get(META, token=ADMIN, version="2.38").status_code == 200
    assert api.get(META, token=ADMIN, version="2.39").status_code == 404
