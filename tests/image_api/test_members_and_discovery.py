"""Members of shared images; version discovery, schemas and info documents; routing errors."""

from __future__ import annotations

from tests.client import ApiClient
from tests.image_api.test_images import create, error, names

V2 = "/image/v2"


def test_sharing_lifecycle(glance: ApiClient) -> None:
    image = create(glance, token="owner:owner", name="shared", visibility="shared")
    members = f"{V2}/images/{image['id']}/members"
    added = glance.post(members, json={"member": "demo"}, token="owner:owner")
    assert added.status_code == 200, added.text
    assert added.json()["status"] == "pending"
    error(glance.post(members, json={"member": "demo"}, token="owner:owner"), 409)
    # Pending: reachable by id, listed only when asked for pending memberships.
    assert glance.get(f"{V2}/images/{image['id']}", token="demo:demo").status_code == 200
    assert "shared" not in names(glance, token="demo:demo")
    assert "shared" in names(glance, "?member_status=pending", token="demo:demo")
    error(glance.put(f"{members}/demo", json={"status": "accepted"}, token="owner:owner"), 403)
    error(glance.put(f"{members}/demo", json={"status": "maybe"}, token="demo:demo"), 400)
    answered = glance.put(f"{members}/demo", json={"status": "accepted"}, token="demo:demo")
    assert answered.json()["status"] == "accepted"
    assert "shared" in names(glance, token="demo:demo")
    assert [m["member_id"] for m in glance.get(members, token="owner:owner").json()["members"]] == [
        "demo"
    ]
    error(glance.get(f"{V2}/images/{image['id']}", token="other:other"), 404)
    error(glance.get(f"{members}/demo", token="other:other"), 404)
    error(glance.delete(f"{members}/demo", token="demo:demo"), 403)
    assert glance.delete(f"{members}/demo", token="owner:owner").status_code == 204
    error(glance.get(f"{V2}/images/{image['id']}", token="demo:demo"), 404)
    error(glance.delete(f"{members}/demo", token="owner:owner"), 404)


def test_only_shared_images_have_members(glance: ApiClient) -> None:
    image = create(glance, name="private", visibility="private")
    members = f"{V2}/images/{image['id']}/members"
    assert "shared" in error(glance.post(members, json={"member": "demo"}), 403)
    error(glance.post(f"{V2}/images/{image['id']}/members", json={"nope": 1}), 400)


def test_version_discovery_is_anonymous_and_points_at_v2(glance: ApiClient) -> None:
    resp = glance.get("/image", token=None)
    assert resp.status_code == 300
    current = resp.json()["versions"][0]
    assert current["status"] == "CURRENT"
    assert current["links"][0]["href"] == "http://openkeel.test/image/v2/"
    assert glance.get("/image/versions", token=None).status_code == 200


def test_schemas_and_info(glance: ApiClient) -> None:
    image = glance.get(f"{V2}/schemas/image").json()
    assert image["name"] == "image" and image["properties"]["status"]["readOnly"]
    assert glance.get(f"{V2}/schemas/images").json()["properties"]["images"]["items"]["name"] == (
        "image"
    )
    assert glance.get(f"{V2}/schemas/member").json()["name"] == "member"
    assert glance.get(f"{V2}/schemas/members").json()["name"] == "members"
    assert glance.get(f"{V2}/info/import").json()["import-methods"]["value"] == []
    assert glance.get(f"{V2}/info/stores").json()["stores"][0]["default"] is True


def test_unknown_paths_and_methods(glance: ApiClient) -> None:
    error(glance.get(f"{V2}/nothing"), 404)
    resp = glance.post(f"{V2}/schemas/image", json={})
    error(resp, 405)
    assert resp.headers["allow"] == "GET"


def test_compute_api_still_answers_next_to_the_image_api(glance: ApiClient) -> None:
    assert glance.get("/v2.1/flavors").status_code == 200


def test_bad_credentials_are_401_in_glance_format(glance: ApiClient) -> None:
    error(glance.get(f"{V2}/images", token=":nobody"), 401)


def test_shared_listing_for_owner_members_and_admin(glance: ApiClient) -> None:
    image = create(glance, token="owner:owner", name="sh", visibility="shared")
    members = f"{V2}/images/{image['id']}/members"
    glance.post(members, json={"member": "demo"}, token="owner:owner")
    glance.put(f"{members}/demo", json={"status": "rejected"}, token="demo:demo")
    assert names(glance, "?visibility=shared", token="owner:owner") == ["sh"]
    assert names(glance, "?visibility=shared", token="demo:demo") == []
    assert names(glance, "?visibility=shared&member_status=rejected", token="demo:demo") == ["sh"]
    assert names(glance, "?visibility=shared&member_status=all", token="demo:demo") == ["sh"]
    assert names(glance, "?visibility=shared") == ["sh"]  # admins see every image
    assert names(glance, "?visibility=shared", token="other:other") == []
