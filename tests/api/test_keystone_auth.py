"""Keystone authentication against a real Keystone (scripts/start-keystone.sh, 127.0.0.1:5000).

The fixtures create a service user (role ``service``, as Nova's ``nova`` user) and a member user
in a fresh project, then drive the compute app with real tokens: contexts, policy 403 vs 200,
401 with ``WWW-Authenticate``, project id in the URL, and the token cache.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from keystoneauth1 import session
from keystoneauth1.identity import v3

from openkeel.api.app import ComputeApiApp
from openkeel.api.factory import build_api_app
from openkeel.api.keystone import (
    CACHE_MISS,
    CATALOG_TYPES,
    KeystoneAuth,
    KeystoneUnauthorized,
    TokenCache,
    TokenIdentity,
    v2_catalog,
)
from openkeel.api.policy import PolicyEnforcer
from openkeel.api.request import ApiRequest
from openkeel.api.resources.versions import routes as versions_routes
from openkeel.api.routing import RouteTable, endpoint
from openkeel.api.services import ApiServices
from tests.client import ApiClient
from tests.conftest import make_services

pytestmark = pytest.mark.keystone

KS_ROOT = "http://127.0.0.1:5000"
KS_V3 = f"{KS_ROOT}/v3"
ADMIN_PASSWORD = os.environ.get("ADMIN_PASSWORD", "admin-secret")
UNAUTHORIZED = {
    "error": {
        "code": 401,
        "title": "Unauthorized",
        "message": "The request you have made requires authentication.",
    }
}
ADMIN_RULE = "os_compute_api:os-availability-zone:detail"  # rule:context_is_admin
READER_RULE = "os_compute_api:os-floating-ips:list"  # rule:project_reader_or_admin


@dataclass
class Identity:
    """Users and projects the fixtures made in Keystone."""

    admin: session.Session
    service_user: str
    service_project: str
    member_user: str
    member_user_id: str
    member_project_id: str
    password: str


def keystone_required() -> None:
    try:
        httpx.get(KS_V3, timeout=3).raise_for_status()
    except httpx.HTTPError:
        message = "Keystone not running at 127.0.0.1:5000: run scripts/start-keystone.sh"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


def _admin_session() -> session.Session:
    auth = v3.Password(
        auth_url=KS_V3,
        username="admin",
        password=ADMIN_PASSWORD,
        project_name="admin",
        user_domain_id="default",
        project_domain_id="default",
    )
    return session.Session(auth=auth)


def _post(ks: session.Session, path: str, key: str, body: dict[str, Any]) -> str:
    return str(ks.post(f"{KS_V3}{path}", json={key: body}).json()[key]["id"])


def _role_id(ks: session.Session, name: str) -> str:
    roles = ks.get(f"{KS_V3}/roles?name={name}").json()["roles"]
    return str(roles[0]["id"]) if roles else _post(ks, "/roles", "role", {"name": name})


@pytest.fixture(scope="module")
def ident() -> Iterator[Identity]:
    keystone_required()
    ks = _admin_session()
    tag = uuid.uuid4().hex[:8]
    password = f"pw-{uuid.uuid4().hex}"
    svc_project = _post(
        ks, "/projects", "project", {"name": f"okt-svc-{tag}", "domain_id": "default"}
    )
    member_project = _post(
        ks, "/projects", "project", {"name": f"okt-{tag}", "domain_id": "default"}
    )
    users = {
        name: _post(
            ks, "/users", "user", {"name": name, "password": password, "domain_id": "default"}
        )
        for name in (f"okt-nova-{tag}", f"okt-member-{tag}")
    }
    svc_user, member_user = users
    ks.put(
        f"{KS_V3}/projects/{svc_project}/users/{users[svc_user]}/roles/{_role_id(ks, 'service')}"
    )
    ks.put(
        f"{KS_V3}/projects/{member_project}/users/{users[member_user]}/roles/{_role_id(ks, 'member')}"
    )
    yield Identity(
        ks, svc_user, f"okt-svc-{tag}", member_user, users[member_user], member_project, password
    )
    for user_id in users.values():
        ks.delete(f"{KS_V3}/users/{user_id}")
    for project_id in (svc_project, member_project):
        ks.delete(f"{KS_V3}/projects/{project_id}")


def issue_token(username: str, password: str, scope: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """A token straight from Keystone: (id, token document)."""
    body = {
        "auth": {
            "identity": {
                "methods": ["password"],
                "password": {
                    "user": {"name": username, "password": password, "domain": {"id": "default"}}
                },
            },
            "scope": scope,
        }
    }
    resp = httpx.post(f"{KS_V3}/auth/tokens", json=body, timeout=30)
    assert resp.status_code == 201, resp.text
    return resp.headers["x-subject-token"], resp.json()["token"]


def admin_project_token() -> tuple[str, dict[str, Any]]:
    scope = {"project": {"name": "admin", "domain": {"id": "default"}}}
    return issue_token("admin", ADMIN_PASSWORD, scope)


def whoami(req: ApiRequest) -> dict[str, Any]:
    ctx = req.context
    return {
        "user_id": ctx.user_id,
        "project_id": ctx.project_id,
        "roles": sorted(ctx.roles),
        "system_scope": ctx.system_scope,
        "domain_id": ctx.domain_id,
        "user_domain_id": ctx.user_domain_id,
        "project_domain_id": ctx.project_domain_id,
        "catalog_types": sorted(s["type"] for s in ctx.service_catalog),
        "auth_token": ctx.auth_token,
        "is_admin": ctx.is_admin,
    }


def admin_probe(req: ApiRequest) -> dict[str, Any]:
    req.context.can(ADMIN_RULE)
    return whoami(req)


def reader_probe(req: ApiRequest) -> dict[str, Any]:
    req.context.can(READER_RULE)
    return whoami(req)


def probe_routes() -> RouteTable:
    """The versions routes plus probes that check one admin and one reader rule.

    Only ``versions`` is taken from the product so that resources under construction elsewhere
    cannot break these tests; the probes exercise the same policy path as real handlers.
    """
    table = RouteTable()
    versions_routes.register(table)
    table.add("GET", "/okt-probe/whoami", endpoint(whoami))
    table.add("GET", "/okt-probe/admin", endpoint(admin_probe, policy=ADMIN_RULE))
    table.add("GET", "/okt-probe/reader", endpoint(reader_probe, policy=READER_RULE))
    return table


@dataclass
class KeystoneApp:
    client: ApiClient
    auth: KeystoneAuth
    services: ApiServices


@pytest.fixture(scope="module")
def app(ident: Identity, tmp_path_factory: pytest.TempPathFactory) -> Iterator[KeystoneApp]:
    services = make_services(
        tmp_path_factory.mktemp("ks"),
        **{
            "api.auth_strategy": "keystone",
            "keystone_authtoken.auth_url": KS_V3,
            "keystone_authtoken.www_authenticate_uri": KS_ROOT,
            "keystone_authtoken.username": ident.service_user,
            "keystone_authtoken.password": ident.password,
            "keystone_authtoken.project_name": ident.service_project,
            "keystone_authtoken.user_domain_id": "default",
            "keystone_authtoken.project_domain_id": "default",
        },
    )
    auth = KeystoneAuth(services.conf)
    compute = ComputeApiApp(probe_routes(), auth, PolicyEnforcer(services.conf), services)
    client = ApiClient(compute)
    yield KeystoneApp(client, auth, services)
    client.close()
    services.api_db.dispose()


@pytest.fixture(scope="module")
def member_token(ident: Identity) -> str:
    scope = {"project": {"id": ident.member_project_id}}
    return issue_token(ident.member_user, ident.password, scope)[0]


@pytest.fixture(scope="module")
def product(app: KeystoneApp, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiClient]:
    """The whole product app from the factory (every resource), authenticating with Keystone."""
    services = make_services(
        tmp_path_factory.mktemp("ks-full"), None, **_conf_overrides(app.services)
    )
    client = ApiClient(build_api_app(services))
    yield client
    client.close()
    services.api_db.dispose()


def test_real_routes_admin_rule_and_reader_rule(
    product: ApiClient, ident: Identity, member_token: str
) -> None:
    flavor = {"flavor": {"name": "okt-ks", "ram": 512, "vcpus": 1, "disk": 1}}
    resp = product.post("/v2.1/flavors", flavor, token=member_token)
    assert resp.status_code == 403
    assert resp.json() == {
        "forbidden": {
            "code": 403,
            "message": "Policy doesn't allow os_compute_api:os-flavor-manage:create to be performed.",
        }
    }
    admin_token, _ = admin_project_token()
    resp = product.post("/v2.1/flavors", flavor, token=admin_token)
    assert resp.status_code == 200
    assert resp.json()["flavor"]["name"] == "okt-ks"
    own = f"/v2.1/os-quota-sets/{ident.member_project_id}"
    assert product.get(own, token=member_token).status_code == 200
    other = product.get(f"/v2.1/os-quota-sets/{uuid.uuid4().hex}", token=member_token)
    assert other.status_code == 403


def test_admin_token_on_a_real_route(app: KeystoneApp) -> None:
    token, _ = admin_project_token()
    resp = app.client.get("/v2.1/versions/v2.1", token=token)
    assert resp.status_code == 200
    assert resp.json()["version"]["id"] == "v2.1"


def test_admin_context_from_token(app: KeystoneApp) -> None:
    token, doc = admin_project_token()
    resp = app.client.get("/v2.1/okt-probe/admin", token=token)
    assert resp.status_code == 200
    assert {"admin", "member", "reader"} <= {role["name"] for role in doc["roles"]}
    # Nova keeps only the services it calls on the user's behalf. keystone.sh registers
    # identity and compute (kept neither); scripts/tempest.sh adds an image service while it
    # runs, so the expectation is read from the token's own catalog.
    kept = sorted({s["type"] for s in doc.get("catalog", [])} & CATALOG_TYPES)
    assert resp.json() == {
        "user_id": doc["user"]["id"],
        "project_id": doc["project"]["id"],
        "roles": sorted(role["name"] for role in doc["roles"]),
        "system_scope": None,
        "domain_id": None,
        "user_domain_id": "default",
        "project_domain_id": "default",
        "catalog_types": kept,
        "auth_token": token,
        "is_admin": True,
    }


def test_member_denied_admin_rule_allowed_reader_rule(
    app: KeystoneApp, ident: Identity, member_token: str
) -> None:
    resp = app.client.get("/v2.1/okt-probe/admin", token=member_token)
    assert resp.status_code == 403
    assert resp.json() == {
        "forbidden": {
            "code": 403,
            "message": f"Policy doesn't allow {ADMIN_RULE} to be performed.",
        }
    }
    resp = app.client.get("/v2.1/okt-probe/reader", token=member_token)
    assert resp.status_code == 200
    body = resp.json()
    assert (body["user_id"], body["project_id"]) == (ident.member_user_id, ident.member_project_id)
    assert body["roles"] == ["member", "reader"]
    assert body["is_admin"] is False


def test_system_scoped_token(app: KeystoneApp) -> None:
    token, doc = issue_token("admin", ADMIN_PASSWORD, {"system": {"all": True}})
    body = app.client.get("/v2.1/okt-probe/whoami", token=token).json()
    assert body["system_scope"] == "all"
    assert body["project_id"] is None
    assert body["user_id"] == doc["user"]["id"]


def test_invalid_token_is_401_with_challenge(app: KeystoneApp) -> None:
    for token in ("not-a-token", None):
        resp = app.client.get("/v2.1/okt-probe/whoami", token=token)
        assert resp.status_code == 401
        assert resp.json() == UNAUTHORIZED
        assert resp.headers["www-authenticate"] == f'Keystone uri="{KS_ROOT}"'
        assert resp.headers["content-type"] == "application/json; charset=UTF-8"
        assert resp.headers["x-openstack-request-id"].startswith("req-")


def test_revoked_token_is_401(app: KeystoneApp, ident: Identity) -> None:
    token, _ = admin_project_token()
    ident.admin.delete(f"{KS_V3}/auth/tokens", headers={"X-Subject-Token": token})
    resp = app.client.get("/v2.1/okt-probe/whoami", token=token)
    assert resp.status_code == 401
    assert resp.json() == UNAUTHORIZED


def test_project_id_in_url(app: KeystoneApp, ident: Identity, member_token: str) -> None:
    own = app.client.get(f"/v2.1/{ident.member_project_id}/okt-probe/reader", token=member_token)
    assert own.status_code == 200
    other = uuid.uuid4().hex
    resp = app.client.get(f"/v2.1/{other}/okt-probe/reader", token=member_token)
    assert resp.status_code == 400
    assert resp.json() == {
        "badRequest": {
            "code": 400,
            "message": (
                f"Malformed request URL: URL's project_id '{other}' doesn't match "
                f"Context's project_id '{ident.member_project_id}'"
            ),
        }
    }


def test_token_cache_hit_skips_keystone(app: KeystoneApp) -> None:
    token, _ = admin_project_token()
    before = app.auth.keystone_calls
    for _ in range(3):
        assert app.client.get("/v2.1/okt-probe/whoami", token=token).status_code == 200
    assert app.auth.keystone_calls == before + 1
    for _ in range(2):
        assert app.client.get("/v2.1/okt-probe/whoami", token="bogus-token").status_code == 401
    assert app.auth.keystone_calls == before + 2


def test_cache_ttl_and_token_expiry(app: KeystoneApp, tmp_path: Path) -> None:
    offset = [0.0]
    services = make_services(tmp_path, None, **_conf_overrides(app.services))
    auth = KeystoneAuth(services.conf, clock=lambda: time.time() + offset[0])
    token, _ = admin_project_token()
    headers = {"x-auth-token": token}
    assert auth.authenticate_cached(headers, "req-0") is None
    assert auth.keystone_calls == 0
    assert auth.authenticate(headers, "req-1").request_id == "req-1"
    cached = auth.authenticate_cached(headers, "req-1b")
    assert cached is not None and cached.auth_token == token
    assert auth.authenticate(headers, "req-2").request_id == "req-2"
    assert auth.keystone_calls == 1
    offset[0] = 301.0  # past token_cache_time (300 s)
    auth.authenticate(headers, "req-3")
    assert auth.keystone_calls == 2
    offset[0] = 5 * 3600.0  # past the token's expires_at (keystone.sh issues 4 h tokens)
    with pytest.raises(KeystoneUnauthorized):
        auth.authenticate(headers, "req-4")
    assert auth.keystone_calls == 3
    services.api_db.dispose()


def test_keystone_down_is_503(app: KeystoneApp, tmp_path: Path) -> None:
    overrides = _conf_overrides(app.services)
    overrides["keystone_authtoken.auth_url"] = "http://127.0.0.1:9/v3"
    overrides["keystone_authtoken.http_request_max_retries"] = 0
    services = make_services(tmp_path, None, **overrides)
    compute = ComputeApiApp(
        probe_routes(), KeystoneAuth(services.conf), PolicyEnforcer(services.conf), services
    )
    client = ApiClient(compute)
    try:
        resp = client.get("/v2.1/okt-probe/whoami", token="any-token")
    finally:
        client.close()
        services.api_db.dispose()
    assert resp.status_code == 503
    assert resp.json() == {
        "serviceUnavailable": {
            "code": 503,
            "message": "The Keystone service is temporarily unavailable.",
        }
    }


def _conf_overrides(services: ApiServices) -> dict[str, object]:
    group = services.conf.keystone_authtoken
    names = ("auth_url", "www_authenticate_uri", "username", "password", "project_name")
    overrides: dict[str, object] = {f"keystone_authtoken.{n}": getattr(group, n) for n in names}
    overrides["keystone_authtoken.user_domain_id"] = "default"
    overrides["keystone_authtoken.project_domain_id"] = "default"
    overrides["api.auth_strategy"] = "keystone"
    return overrides


def test_catalog_is_v2_shaped_and_filtered_like_nova() -> None:
    catalog: list[dict[str, Any]] = [
        {"type": "compute", "name": "nova", "endpoints": []},
        {
            "type": "image",
            "name": "glance",
            "endpoints": [
                {"interface": "public", "url": "http://g/pub", "region": "R1"},
                {"interface": "internal", "url": "http://g/int", "region": "R1"},
                {"interface": "public", "url": "http://g2/pub", "region": "R2"},
            ],
        },
        {"type": "placement", "endpoints": [{"interface": "admin", "url": "http://p"}]},
    ]
    assert v2_catalog(catalog) == (
        {
            "type": "image",
            "name": "glance",
            "endpoints": [
                {"region": "R1", "publicURL": "http://g/pub", "internalURL": "http://g/int"},
                {"region": "R2", "publicURL": "http://g2/pub"},
            ],
        },
        {"type": "placement", "endpoints": [{"adminURL": "http://p"}]},
    )


def test_cache_is_bounded_lru_and_caches_rejections() -> None:
    cache = TokenCache(max_size=2, ttl=60.0, clock=lambda: 1000.0)
    ident = TokenIdentity("u", "p", ("reader",), None, None, "d", "d", (), expires_at=1030.0)
    cache.put("a", ident)
    cache.put("b", None)
    assert cache.get("a") is ident  # "a" is now the most recent
    cache.put("c", ident)
    assert len(cache) == 2
    assert cache.get("b") is CACHE_MISS
    assert cache.get("a") is ident
    assert cache.get("c") is ident


def test_cache_entry_never_outlives_the_token() -> None:
    now = [1000.0]
    cache = TokenCache(max_size=10, ttl=300.0, clock=lambda: now[0])
    ident = TokenIdentity("u", "p", (), None, None, None, None, (), expires_at=1010.0)
    cache.put("t", ident)
    now[0] = 1009.9
    assert cache.get("t") is ident
    now[0] = 1010.0
    assert cache.get("t") is CACHE_MISS


def test_cache_hits_from_many_threads(app: KeystoneApp) -> None:
    token, _ = admin_project_token()
    app.auth.authenticate({"x-auth-token": token}, "req-warm")
    before = app.auth.keystone_calls
    with ThreadPoolExecutor(max_workers=8) as pool:
        users = set(
            pool.map(
                lambda i: app.auth.authenticate({"x-auth-token": token}, f"req-{i}").user_id,
                range(200),
            )
        )
    assert len(users) == 1
    assert app.auth.keystone_calls == before
