"""/image/v2/images: create, show, list, JSON-patch update, delete, tags; Glance's error rules."""

from __future__ import annotations

import html
import json
import re
from typing import Any

import pytest

from openkeel.db.image_catalog import DEFAULT_IMAGE
from tests.client import ApiClient
from tests.image_api.conftest import PATCH

V2 = "/image/v2"


def create(glance: ApiClient, token: str = "admin:admin", **body: Any) -> dict[str, Any]:
    resp = glance.post(f"{V2}/images", json=body, token=token)
    assert resp.status_code == 201, resp.text
    return dict(resp.json())


def patch(glance: ApiClient, image_id: str, ops: Any, token: str = "admin:admin") -> Any:
    return glance.request(
        "PATCH",
        f"{V2}/images/{image_id}",
        json=ops,
        token=token,
        headers={"Content-Type": PATCH},
    )


def error(resp: Any, status: int) -> str:
    """The message of a Glance error answer (HTML for the client's ``Accept: */*``)."""
    assert resp.status_code == status, resp.text
    assert resp.headers["content-type"].startswith("text/html")
    found = re.search(r"<h1>(\d+) ([^<]+)</h1>\n  (.*)<br /><br />", resp.text)
    assert found is not None, resp.text
    assert int(found.group(1)) == status
    return html.unescape(found.group(3))


def test_create_is_queued_with_defaults_and_shows(glance: ApiClient) -> None:
    image = create(glance, name="n", disk_format="qcow2", container_format="bare", os_distro="x")
    assert image["status"] == "queued"
    assert image["visibility"] == "shared"
    assert image["owner"] == "admin"
    assert image["size"] is None and image["checksum"] is None
    assert image["os_distro"] == "x"
    assert image["self"] == f"/v2/images/{image['id']}"
    shown = glance.get(f"{V2}/images/{image['id']}").json()
    assert shown == image


@pytest.mark.parametrize(
    ("body", "status", "text"),
    [
        ({"status": "active"}, 403, "Attribute 'status' is read-only."),
        ({"size": 3}, 403, "Attribute 'size' is read-only."),
        ({"deleted": True}, 403, "Attribute 'deleted' is reserved."),
        ({"os_glance_x": "1"}, 403, "Attribute 'os_glance_x' is reserved."),
        ({"disk_format": "floppy"}, 400, "does not match schema"),
        ({"min_ram": "a"}, 400, "does not match schema"),
        ({"custom": 1}, 400, "does not match schema"),
        ({"visibility": "public"}, 403, "publicize"),
    ],
)
def test_create_refusals(glance: ApiClient, body: dict[str, Any], status: int, text: str) -> None:
    resp = glance.post(f"{V2}/images", json=body, token="demo:demo")
    assert text in error(resp, status)


def test_create_with_an_existing_id_conflicts(glance: ApiClient) -> None:
    image = create(glance, name="a")
    assert "already exists" in error(glance.post(f"{V2}/images", json={"id": image["id"]}), 409)


def test_unknown_image_is_404_in_glance_formats(glance: ApiClient) -> None:
    resp = glance.get(f"{V2}/images/00000000-0000-0000-0000-000000000000")
    assert "No image found" in error(resp, 404)
    as_json = glance.get(f"{V2}/images/x", headers={"Accept": "application/json"})
    assert as_json.status_code == 404
    assert as_json.json() == {
        "message": "No image found with ID x",
        "code": "404 Not Found",
        "title": "Not Found",
    }
    text = glance.get(f"{V2}/images/x", headers={"Accept": "text/plain"})
    assert text.status_code == 404 and text.text.startswith("404 Not Found\n\nNo image found")


def test_patch_core_and_custom_properties(glance: ApiClient) -> None:
    image = create(glance, name="a", disk_format="raw", container_format="bare", k1="v1")
    ops = [
        {"op": "replace", "path": "/name", "value": "b"},
        {"op": "add", "path": "/k2", "value": "v2"},
        {"op": "add", "path": "/k1", "value": "again"},  # add of a present key replaces
        {"op": "replace", "path": "/min_ram", "value": 512},
        {"op": "replace", "path": "/tags", "value": ["t1", "t1", "t2"]},
    ]
    resp = patch(glance, image["id"], ops)
    assert resp.status_code == 200, resp.text
    body = resp.json()
    assert (body["name"], body["k1"], body["k2"], body["min_ram"]) == ("b", "again", "v2", 512)
    assert body["tags"] == ["t1", "t2"]
    body = patch(glance, image["id"], [{"op": "remove", "path": "/k1"}]).json()
    assert "k1" not in body and body["k2"] == "v2"


@pytest.mark.parametrize(
    ("ops", "status", "text"),
    [
        ({"op": "add"}, 400, "JSON array"),
        ([{"op": "move", "path": "/name", "value": "x"}], 400, '"op"'),
        ([{"op": "add", "path": "/name"}], 400, '"value"'),
        ([{"op": "add", "path": "name", "value": "x"}], 400, "path"),
        ([{"op": "add", "path": "/a/b", "value": "x"}], 400, "Nested"),
        ([{"op": "replace", "path": "/min_disk", "value": -1}], 400, "schema"),
        ([{"op": "replace", "path": "/status", "value": "active"}], 403, "read-only"),
        ([{"op": "replace", "path": "/id", "value": "x"}], 403, "read-only"),
        ([{"op": "add", "path": "/deleted_at", "value": "x"}], 403, "reserved"),
        ([{"op": "remove", "path": "/name"}], 403, "cannot be removed"),
        ([{"op": "remove", "path": "/nope"}], 409, "does not exist"),
        ([{"op": "replace", "path": "/nope", "value": "x"}], 409, "does not exist"),
    ],
)
def test_patch_refusals(glance: ApiClient, ops: Any, status: int, text: str) -> None:
    image = create(glance, name="a")
    assert text in error(patch(glance, image["id"], ops), status)


def test_patch_needs_the_json_patch_media_type(glance: ApiClient) -> None:
    image = create(glance, name="a")
    resp = glance.request("PATCH", f"{V2}/images/{image['id']}", json=[])
    assert "expects Content-Type one of" in error(resp, 415)
    assert resp.headers["accept-patch"] == (
        "application/openstack-images-v2.0-json-patch, " + PATCH
    )


def test_patch_draft_4_body_of_the_v2_0_media_type(glance: ApiClient) -> None:
    """tempest's images client sends ``{"add": "/key", "value": ...}`` as v2.0-json-patch."""
    image = create(glance, name="a")
    headers = {"Content-Type": "application/openstack-images-v2.0-json-patch"}
    url = f"{V2}/images/{image['id']}"
    ops = [{"add": "/hw_rescue_bus", "value": "usb"}, {"replace": "/name", "value": "b"}]
    resp = glance.request("PATCH", url, content=json.dumps(ops), headers=headers)
    assert resp.status_code == 200, resp.text
    assert (resp.json()["hw_rescue_bus"], resp.json()["name"]) == ("usb", "b")
    resp = glance.request("PATCH", url, content=json.dumps([{"op": "remove", "path": "/x"}]),
                          headers=headers)  # fmt: skip
    assert "exactly one member" in error(resp, 400)
    both = [{"add": "/x", "remove": "/y", "value": 1}]
    resp = glance.request("PATCH", url, content=json.dumps(both), headers=headers)
    assert "only one member" in error(resp, 400)


def test_oversized_json_body_is_413(glance: ApiClient) -> None:
    error(glance.post(f"{V2}/images", json={"name": "x" * (2 * 1024 * 1024)}), 413)


def test_patch_malformed_json_is_400(glance: ApiClient) -> None:
    image = create(glance, name="a")
    resp = glance.request(
        "PATCH", f"{V2}/images/{image['id']}", content=b"[{", headers={"Content-Type": PATCH}
    )
    error(resp, 400)


def test_only_owner_or_admin_changes_and_formats_freeze_after_upload(glance: ApiClient) -> None:
    image = create(glance, token="demo:demo", name="a", visibility="community")
    ops = [{"op": "replace", "path": "/name", "value": "b"}]
    assert "not permitted" in error(patch(glance, image["id"], ops, token="other:other"), 403)
    assert patch(glance, image["id"], ops, token="demo:demo").status_code == 200
    make_public = [{"op": "replace", "path": "/visibility", "value": "public"}]
    error(patch(glance, image["id"], make_public, token="demo:demo"), 403)
    assert patch(glance, image["id"], make_public).json()["visibility"] == "public"
    frozen = [{"op": "replace", "path": "/disk_format", "value": "raw"}]
    assert "queued" in error(patch(glance, DEFAULT_IMAGE.id, frozen), 403)


def test_delete_protected_is_403_then_unprotect_and_delete(glance: ApiClient) -> None:
    image = create(glance, name="p", protected=True)
    assert "protected" in error(glance.delete(f"{V2}/images/{image['id']}"), 403)
    patch(glance, image["id"], [{"op": "replace", "path": "/protected", "value": False}])
    assert glance.delete(f"{V2}/images/{image['id']}").status_code == 204
    error(glance.get(f"{V2}/images/{image['id']}"), 404)
    error(glance.delete(f"{V2}/images/{image['id']}"), 404)


def test_others_cannot_see_or_delete_private_images(glance: ApiClient) -> None:
    image = create(glance, token="demo:demo", name="mine", visibility="private")
    error(glance.get(f"{V2}/images/{image['id']}", token="other:other"), 404)
    error(glance.delete(f"{V2}/images/{image['id']}", token="other:other"), 404)
    public = create(glance, name="pub", visibility="public")
    assert "not permitted" in error(
        glance.delete(f"{V2}/images/{public['id']}", token="demo:demo"), 403
    )


def test_tags(glance: ApiClient) -> None:
    image = create(glance, name="t")
    url = f"{V2}/images/{image['id']}/tags"
    added = glance.put(f"{url}/a%20b")
    assert added.status_code == 204
    # No body, no content type: python-glanceclient parses a typed empty body and fails.
    assert "content-type" not in added.headers
    assert glance.put(f"{url}/a%20b").status_code == 204
    assert glance.get(f"{V2}/images/{image['id']}").json()["tags"] == ["a b"]
    assert glance.delete(f"{url}/a%20b").status_code == 204
    error(glance.delete(f"{url}/a%20b"), 404)
    assert glance.put(f"{url}/100%2525").status_code == 204  # decoded once: "100%25"
    assert glance.get(f"{V2}/images/{image['id']}").json()["tags"] == ["100%25"]


def names(glance: ApiClient, query: str = "", token: str = "admin:admin") -> list[str]:
    resp = glance.get(f"{V2}/images{query}", token=token)
    assert resp.status_code == 200, resp.text
    return [i["name"] for i in resp.json()["images"]]


def test_list_filters_and_sorts(glance: ApiClient) -> None:
    create(glance, name="b", disk_format="raw", container_format="bare", os_distro="d", tags=["x"])
    create(glance, name="a", disk_format="qcow2", container_format="bare", tags=["x", "y"])
    create(glance, name="c", os_hidden=True)
    assert names(glance, "?sort=name:asc") == ["a", "b", DEFAULT_IMAGE.name]
    assert names(glance, "?sort_key=name&sort_dir=desc") == [DEFAULT_IMAGE.name, "b", "a"]
    assert names(glance, "?disk_format=raw") == ["b"]
    assert names(glance, "?name=in:a,b&sort=name:asc") == ["a", "b"]
    assert names(glance, "?tag=x&tag=y") == ["a"]
    assert names(glance, "?os_distro=d") == ["b"]
    assert names(glance, "?os_hidden=true") == ["c"]
    assert names(glance, "?visibility=public") == [DEFAULT_IMAGE.name]
    assert names(glance, "?status=active") == [DEFAULT_IMAGE.name]


@pytest.mark.parametrize(
    "query",
    ["?limit=x", "?limit=-1", "?sort_key=bogus", "?sort=name:up", "?sort=name&sort_key=id",
     "?visibility=everyone", "?member_status=maybe", "?marker=nope", "?size_min=big"],
)  # fmt: skip
def test_list_refusals(glance: ApiClient, query: str) -> None:
    error(glance.get(f"{V2}/images{query}"), 400)


def test_list_sorts_unnamed_and_empty_names(glance: ApiClient) -> None:
    create(glance, name="")
    create(glance)
    assert names(glance, "?sort=name:asc") == [None, "", DEFAULT_IMAGE.name]


def test_list_pages_with_next_links(glance: ApiClient) -> None:
    for name in ("p1", "p2", "p3"):
        create(glance, name=name)
    seen: list[str] = []
    url: str | None = f"{V2}/images?limit=2&sort=name:asc"
    while url is not None:
        body = glance.get(url).json()
        seen += [i["name"] for i in body["images"]]
        url = "/image" + body["next"] if "next" in body else None
    assert seen == [DEFAULT_IMAGE.name, "p1", "p2", "p3"]


def test_community_images_are_listed_only_when_asked(glance: ApiClient) -> None:
    create(glance, token="demo:demo", name="comm", visibility="community")
    assert "comm" not in names(glance, token="other:other")
    assert names(glance, "?visibility=community", token="other:other") == ["comm"]
    assert "comm" in names(glance, token="demo:demo")


def test_image_tasks_are_an_empty_list(glance: ApiClient) -> None:
    image = create(glance, name="t")
    resp = glance.get(f"{V2}/images/{image['id']}/tasks")
    assert (resp.status_code, resp.json()) == (200, {"tasks": []})
    assert glance.get(f"{V2}/images/5e3f1c1a-0000-4000-8000-000000000000/tasks").status_code == 404
