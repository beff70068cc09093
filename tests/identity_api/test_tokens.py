"""/identity/v3/auth/tokens: password and token auth, scopes, validation, revocation, and the
compute and image APIs accepting exactly the tokens the identity service would validate."""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from openkeel.db.identity_store import SYSTEM_TARGET
from tests.identity_api.conftest import ADMIN_PASSWORD, V3, IdentityCloud, password_auth


def issue(cloud: IdentityCloud, body: Any, query: str = "") -> Any:
    return cloud.client.post(f"{V3}/auth/tokens{query}", json=body, token=None)


def error(resp: Any, status: int) -> str:
    assert resp.status_code == status, resp.text
    body = resp.json()["error"]
    assert body["code"] == status
    return str(body["message"])


def test_password_auth_scoped_to_a_project_by_name(cloud: IdentityCloud) -> None:
    resp = issue(cloud, password_auth("admin", ADMIN_PASSWORD))
    assert resp.status_code == 201
    token = resp.json()["token"]
    assert resp.headers["X-Subject-Token"].startswith("gAAAAA")
    assert token["methods"] == ["password"]
    assert token["user"]["name"] == "admin"
    assert token["user"]["domain"] == {"id": "default", "name": "Default"}
    assert token["project"]["name"] == "admin"
    assert {r["name"] for r in token["roles"]} == {"admin", "manager", "member", "reader"}
    types = {s["type"]: s for s in token["catalog"]}
    assert set(types) == {"compute", "identity", "image", "network", "block-storage", "volumev3"}
    urls = {e["interface"]: e["url"] for e in types["compute"]["endpoints"]}
    assert urls == dict.fromkeys(("public", "internal", "admin"), "http://openkeel.test/v2.1")
    issued = datetime.datetime.fromisoformat(token["issued_at"].rstrip("Z"))
    expires = datetime.datetime.fromisoformat(token["expires_at"].rstrip("Z"))
    assert (expires - issued).total_seconds() == pytest.approx(3600, abs=1)
    assert len(token["audit_ids"]) == 1


def test_nocatalog_and_unscoped_and_default_project(cloud: IdentityCloud, admin: str) -> None:
    assert (
        "catalog"
        not in issue(cloud, password_auth("admin", ADMIN_PASSWORD), "?nocatalog").json()["token"]
    )
    # No scope: the admin's default project (Keystone's rule for a user who has one).
    token = issue(cloud, password_auth("admin", ADMIN_PASSWORD, None)).json()["token"]
    assert token["project"]["name"] == "admin"
    body = password_auth("admin", ADMIN_PASSWORD, None)
    body["auth"]["scope"] = "unscoped"
    token = issue(cloud, body).json()["token"]
    assert "project" not in token and "roles" not in token and "catalog" not in token


def test_system_scope(cloud: IdentityCloud) -> None:
    token = issue(cloud, password_auth("admin", ADMIN_PASSWORD, None, system={"all": True}))
    assert token.status_code == 201
    assert token.json()["token"]["system"] == {"all": True}


@pytest.mark.parametrize(
    ("name", "password", "project"),
    [
        ("admin", "wrong", "admin"),
        ("nobody", ADMIN_PASSWORD, "admin"),
        ("admin", ADMIN_PASSWORD, "no-such-project"),
    ],
)
def test_bad_credentials_are_401(
    cloud: IdentityCloud, name: str, password: str, project: str
) -> None:
    resp = issue(cloud, password_auth(name, password, project))
    assert error(resp, 401) == "The request you have made requires authentication."
    assert resp.headers["WWW-Authenticate"] == 'Keystone uri="http://openkeel.test/identity"'


@pytest.mark.parametrize(
    "body",
    [{}, {"auth": {}}, {"auth": {"identity": {}}}, {"auth": {"identity": {"methods": "password"}}}],
)
def test_malformed_auth_is_400(cloud: IdentityCloud, body: Any) -> None:
    assert error(issue(cloud, body), 400).startswith("Invalid input for field")


def test_not_json_is_400(cloud: IdentityCloud) -> None:
    resp = cloud.client.post(f"{V3}/auth/tokens", content=b"{", token=None)
    assert error(resp, 400) == "Malformed JSON in request body."


def test_a_user_without_a_role_on_the_project_cannot_scope_to_it(
    cloud: IdentityCloud, admin: str
) -> None:
    cloud.call("POST", f"{V3}/users", admin, json={"user": {"name": "u", "password": "pw"}})
    assert error(issue(cloud, password_auth("u", "pw", "admin")), 401)
    # Unscoped works, and lists no projects.
    token = cloud.login("u", "pw", None)
    assert cloud.call("GET", f"{V3}/auth/projects", token).json()["projects"] == []


def test_token_method_rescopes_and_keeps_expiry(cloud: IdentityCloud, admin: str) -> None:
    unscoped = issue(
        cloud,
        {"auth": {**password_auth("admin", ADMIN_PASSWORD, None)["auth"], "scope": "unscoped"}},
    )
    first = unscoped.json()["token"]
    body = {
        "auth": {
            "identity": {
                "methods": ["token"],
                "token": {"id": unscoped.headers["X-Subject-Token"]},
            },
            "scope": {"project": {"name": "admin", "domain": {"name": "Default"}}},
        }
    }
    resp = issue(cloud, body)
    assert resp.status_code == 201
    token = resp.json()["token"]
    assert token["project"]["name"] == "admin"
    assert token["expires_at"] == first["expires_at"]
    assert token["audit_ids"][1] == first["audit_ids"][0]


def test_validate_check_and_revoke(cloud: IdentityCloud, admin: str) -> None:
    other = cloud.login("admin", ADMIN_PASSWORD)
    hdr = {"X-Subject-Token": other}
    shown = cloud.call("GET", f"{V3}/auth/tokens", admin, headers=hdr)
    assert shown.status_code == 200 and shown.headers["X-Subject-Token"] == other
    assert shown.json()["token"]["project"]["name"] == "admin"
    assert cloud.call("HEAD", f"{V3}/auth/tokens", admin, headers=hdr).status_code == 200
    assert cloud.call("GET", "/v2.1/servers", other).status_code == 200
    assert cloud.call("DELETE", f"{V3}/auth/tokens", admin, headers=hdr).status_code == 204
    assert error(cloud.call("GET", f"{V3}/auth/tokens", admin, headers=hdr), 404).startswith(
        "Could not find token"
    )
    # The compute API forgets the revoked token at once (same process).
    assert cloud.call("GET", "/v2.1/servers", other).status_code == 401
    assert cloud.call("GET", "/v2.1/servers", admin).status_code == 200


def test_garbage_and_missing_tokens_are_401_everywhere(cloud: IdentityCloud) -> None:
    for path in ("/v2.1/servers", "/image/v2/images", f"{V3}/projects", f"{V3}/auth/catalog"):
        assert cloud.call("GET", path, "not-a-token").status_code == 401, path
        assert cloud.call("GET", path, None).status_code == 401, path  # type: ignore[arg-type]
    # Discovery needs no token.
    assert cloud.call("GET", "/identity", None).status_code == 300  # type: ignore[arg-type]
    assert cloud.call("GET", f"{V3}", None).json()["version"]["id"] == "v3.14"  # type: ignore[arg-type]


def test_expired_token_is_refused(cloud: IdentityCloud, admin: str) -> None:
    later = datetime.datetime.now(datetime.UTC).replace(tzinfo=None) + datetime.timedelta(hours=2)
    cloud.identity._clock = lambda: later
    assert cloud.call("GET", f"{V3}/auth/catalog", admin).status_code == 401


def test_password_change_ends_the_users_tokens(cloud: IdentityCloud, admin: str) -> None:
    user = _member(cloud, admin, "carol", "pw1")
    token = cloud.login("carol", "pw1")
    assert cloud.call("GET", "/v2.1/servers", token).status_code == 200
    wrong = {"user": {"password": "pw2", "original_password": "nope"}}
    assert cloud.call("POST", f"{V3}/users/{user}/password", token, json=wrong).status_code == 401
    body = {"user": {"password": "pw2", "original_password": "pw1"}}
    assert cloud.call("POST", f"{V3}/users/{user}/password", token, json=body).status_code == 204
    assert cloud.call("GET", "/v2.1/servers", token).status_code == 401
    assert cloud.login("carol", "pw2")


def test_role_taken_away_ends_the_project_token(cloud: IdentityCloud, admin: str) -> None:
    user = _member(cloud, admin, "dave", "pw")
    token = cloud.login("dave", "pw")
    member = _role_id(cloud, admin, "member")
    listed = cloud.call("GET", "/v2.1/servers", token)
    assert listed.status_code == 200
    project = _project_id(cloud, admin, "admin")
    path = f"{V3}/projects/{project}/users/{user}/roles/{member}"
    assert cloud.call("DELETE", path, admin).status_code == 204
    assert cloud.call("GET", "/v2.1/servers", token).status_code == 401


def test_compute_api_sees_the_tokens_project_and_roles(cloud: IdentityCloud, admin: str) -> None:
    _member(cloud, admin, "erin", "pw")
    token = cloud.login("erin", "pw")
    # A member cannot do admin things; the admin can.
    assert cloud.call("GET", "/v2.1/os-hypervisors", token).status_code == 403
    assert cloud.call("GET", "/v2.1/os-hypervisors", admin).status_code == 200
    project = _project_id(cloud, admin, "admin")
    limits = cloud.call("GET", "/v2.1/limits", token).json()
    assert limits["limits"]["absolute"]["maxTotalInstances"] >= 1
    quota = cloud.call("GET", f"/v2.1/os-quota-sets/{project}", token)
    assert quota.status_code == 200
    assert cloud.call("GET", "/image/v2/images", token).status_code == 200


def test_system_assignment_is_listed(cloud: IdentityCloud, admin: str) -> None:
    found = cloud.call("GET", f"{V3}/role_assignments?scope.system=all", admin).json()
    assert [a["scope"] for a in found["role_assignments"]] == [{"system": {"all": True}}]
    assert SYSTEM_TARGET  # the store's name for it


def _project_id(cloud: IdentityCloud, admin: str, name: str) -> str:
    found = cloud.call("GET", f"{V3}/projects?name={name}", admin).json()["projects"]
    return str(found[0]["id"])


def _role_id(cloud: IdentityCloud, admin: str, name: str) -> str:
    return str(cloud.call("GET", f"{V3}/roles?name={name}", admin).json()["roles"][0]["id"])


def _member(cloud: IdentityCloud, admin: str, name: str, password: str) -> str:
    """A new user with the member role on the admin project."""
    user = cloud.call(
        "POST", f"{V3}/users", admin, json={"user": {"name": name, "password": password}}
    )
    assert user.status_code == 201, user.text
    user_id = user.json()["user"]["id"]
    project = _project_id(cloud, admin, "admin")
    role = _role_id(cloud, admin, "member")
    assert (
        cloud.call(
            "PUT", f"{V3}/projects/{project}/users/{user_id}/roles/{role}", admin
        ).status_code
        == 204
    )
    return str(user_id)
