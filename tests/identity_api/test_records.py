"""Projects, users, roles and grants: Keystone's answers, errors and default policies."""

from __future__ import annotations

from typing import Any

import pytest

from tests.identity_api.conftest import V3, IdentityCloud
from tests.identity_api.test_tokens import _member, _project_id, _role_id, error


def test_project_lifecycle(cloud: IdentityCloud, admin: str) -> None:
    body = {"project": {"name": "demo", "description": "d", "tags": ["a"]}}
    created = cloud.call("POST", f"{V3}/projects", admin, json=body)
    assert created.status_code == 201
    project = created.json()["project"]
    assert project["domain_id"] == "default" and project["parent_id"] == "default"
    assert project["enabled"] is True and project["tags"] == ["a"] and project["is_domain"] is False
    assert project["links"]["self"] == f"http://openkeel.test{V3}/projects/{project['id']}"
    dup = cloud.call("POST", f"{V3}/projects", admin, json=body)
    assert "Duplicate entry found with name demo at domain ID default" in error(dup, 409)
    path = f"{V3}/projects/{project['id']}"
    patched = cloud.call("PATCH", path, admin, json={"project": {"enabled": False}})
    assert patched.json()["project"]["enabled"] is False
    listed = cloud.call("GET", f"{V3}/projects?enabled=false", admin).json()["projects"]
    assert [p["name"] for p in listed] == ["demo"]
    assert cloud.call("DELETE", path, admin).status_code == 204
    assert error(cloud.call("GET", path, admin), 404) == f"Could not find project: {project['id']}."


def test_user_lifecycle_keeps_extra_attributes(cloud: IdentityCloud, admin: str) -> None:
    body = {"user": {"name": "bob", "password": "pw", "email": "b@example.org"}}
    user = cloud.call("POST", f"{V3}/users", admin, json=body).json()["user"]
    assert user["email"] == "b@example.org" and "password" not in user
    assert user["password_expires_at"] is None and user["enabled"] is True
    path = f"{V3}/users/{user['id']}"
    changed = cloud.call("PATCH", path, admin, json={"user": {"email": None, "description": "x"}})
    assert "email" not in changed.json()["user"] and changed.json()["user"]["description"] == "x"
    assert [
        u["name"] for u in cloud.call("GET", f"{V3}/users?name=bob", admin).json()["users"]
    ] == ["bob"]
    disabled = cloud.call("PATCH", path, admin, json={"user": {"enabled": False}})
    assert disabled.json()["user"]["enabled"] is False
    assert cloud.call("DELETE", path, admin).status_code == 204
    assert cloud.call("GET", path, admin).status_code == 404


def test_disabled_user_cannot_log_in_and_loses_tokens(cloud: IdentityCloud, admin: str) -> None:
    user = _member(cloud, admin, "frank", "pw")
    token = cloud.login("frank", "pw")
    cloud.call("PATCH", f"{V3}/users/{user}", admin, json={"user": {"enabled": False}})
    assert cloud.call("GET", "/v2.1/flavors", token).status_code == 401
    from tests.identity_api.conftest import password_auth

    resp = cloud.client.post(f"{V3}/auth/tokens", json=password_auth("frank", "pw"), token=None)
    assert resp.status_code == 401


def test_grants_and_role_assignments(cloud: IdentityCloud, admin: str) -> None:
    user = _member(cloud, admin, "gina", "pw")
    project = _project_id(cloud, admin, "admin")
    member, reader = _role_id(cloud, admin, "member"), _role_id(cloud, admin, "reader")
    grants = cloud.call("GET", f"{V3}/projects/{project}/users/{user}/roles", admin).json()
    assert [r["name"] for r in grants["roles"]] == ["member"]
    check = f"{V3}/projects/{project}/users/{user}/roles"
    assert cloud.call("HEAD", f"{check}/{member}", admin).status_code == 204
    missing = cloud.call("GET", f"{check}/{reader}", admin)
    assert error(missing, 404).startswith("Could not find role assignment with role")
    direct = cloud.call("GET", f"{V3}/role_assignments?user.id={user}", admin).json()
    assert [a["role"]["id"] for a in direct["role_assignments"]] == [member]
    effective = cloud.call(
        "GET", f"{V3}/role_assignments?user.id={user}&effective&include_names", admin
    ).json()["role_assignments"]
    assert sorted(a["role"]["name"] for a in effective) == ["member", "reader"]
    assert effective[0]["user"]["name"] == "gina"
    assert effective[0]["scope"]["project"]["name"] == "admin"
    # The user may list their own assignments and projects, not anyone's.
    token = cloud.login("gina", "pw")
    own = cloud.call("GET", f"{V3}/role_assignments?user.id={user}", token)
    assert own.status_code == 200
    assert cloud.call("GET", f"{V3}/role_assignments", token).status_code == 403
    mine = cloud.call("GET", f"{V3}/users/{user}/projects", token).json()["projects"]
    assert [p["name"] for p in mine] == ["admin"]


@pytest.mark.parametrize(
    ("method", "path", "body", "rule"),
    [
        ("GET", "/projects", None, "list_projects"),
        ("POST", "/projects", {"project": {"name": "x"}}, "create_project"),
        ("GET", "/users", None, "list_users"),
        ("POST", "/users", {"user": {"name": "x"}}, "create_user"),
        ("GET", "/roles", None, "list_roles"),
        ("POST", "/roles", {"role": {"name": "x"}}, "create_role"),
        ("POST", "/domains", {"domain": {"name": "x"}}, "create_domain"),
    ],
)
def test_members_are_refused_admin_calls(
    cloud: IdentityCloud, admin: str, method: str, path: str, body: Any, rule: str
) -> None:
    _member(cloud, admin, "henry", "pw")
    token = cloud.login("henry", "pw")
    resp = cloud.call(method, f"{V3}{path}", token, json=body)
    assert error(resp, 403) == (
        f"You are not authorized to perform the requested action: identity:{rule}."
    )


def test_what_is_not_offered_says_so(cloud: IdentityCloud, admin: str) -> None:
    domain = cloud.call("POST", f"{V3}/domains", admin, json={"domain": {"name": "x"}})
    assert "not offered" in error(domain, 501)
    nested = {"project": {"name": "child", "parent_id": _project_id(cloud, admin, "admin")}}
    assert "hierarchies" in error(cloud.call("POST", f"{V3}/projects", admin, json=nested), 501)
    assert error(cloud.call("GET", f"{V3}/no-such-thing", admin), 404)
    assert error(cloud.call("PUT", f"{V3}/projects", admin, json={}), 405)


@pytest.mark.parametrize(
    "body",
    [
        {"project": {}},
        {"project": {"name": ""}},
        {"project": {"name": "x", "enabled": "yes"}},
        {"user": {"name": "x"}},
    ],
)
def test_bad_project_bodies_are_400(cloud: IdentityCloud, admin: str, body: Any) -> None:
    assert error(cloud.call("POST", f"{V3}/projects", admin, json=body), 400).startswith(
        "Invalid input for field"
    )


def test_discovery_domains_services_endpoints(cloud: IdentityCloud, admin: str) -> None:
    versions = cloud.call("GET", "/identity", None)  # type: ignore[arg-type]
    assert versions.json()["versions"]["values"][0]["links"][0]["href"] == (
        "http://openkeel.test/identity/v3/"
    )
    domains = cloud.call("GET", f"{V3}/domains?name=Default", admin).json()["domains"]
    assert [d["id"] for d in domains] == ["default"]
    assert cloud.call("GET", f"{V3}/domains/other", admin).status_code == 404
    services = cloud.call("GET", f"{V3}/services?type=image", admin).json()["services"]
    assert [s["name"] for s in services] == ["glance"]
    endpoints = cloud.call(
        "GET", f"{V3}/endpoints?service_id={services[0]['id']}&interface=public", admin
    ).json()["endpoints"]
    assert [e["url"] for e in endpoints] == ["http://openkeel.test/image"]


def test_deleting_a_role_removes_its_assignments(cloud: IdentityCloud, admin: str) -> None:
    role = cloud.call("POST", f"{V3}/roles", admin, json={"role": {"name": "custom"}}).json()[
        "role"
    ]
    user = _member(cloud, admin, "ivy", "pw")
    project = _project_id(cloud, admin, "admin")
    cloud.call("PUT", f"{V3}/projects/{project}/users/{user}/roles/{role['id']}", admin)
    assert cloud.call("DELETE", f"{V3}/roles/{role['id']}", admin).status_code == 204
    left = cloud.call("GET", f"{V3}/role_assignments?role.id={role['id']}", admin).json()
    assert left["role_assignments"] == []
