"""Nova's routes that OpenKeel does not build yet answer 501 notImplemented in Nova's JSON
fault format (404 outside their window); every Nova row is answered by something."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from openkeel.api import unbuilt
from openkeel.api.factory import build_api_app, build_routes
from openkeel.api.microversion import MAX_VERSION, APIVersion, v
from tests import spec_inventory
from tests.client import ApiClient
from tests.conftest import make_services
from tests.spec_inventory import normalise

TABLE = build_routes()
ROUTES = {normalise(r.template): r for r in TABLE.routes()}
SERVER = "7f1e9c43-0a6b-4b8e-9d2a-3c6d8f0e1a55"
NOT_SUPPORTED = {
    "notImplemented": {"code": 501, "message": "The requested functionality is not supported."}
}


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiClient]:
    """One cloud for the module: these requests change nothing."""
    services = make_services(tmp_path_factory.mktemp("unbuilt"))
    client = ApiClient(build_api_app(services))
    yield client
    client.close()
    for engine in (services.api_db, *services.cell_dbs.values()):
        engine.dispose()


def _real_methods(path: str, method: str) -> bool:
    route = ROUTES.get(normalise(path))
    return route is not None and bool(route.methods.get(method))


def _real_action(path: str, key: str) -> bool:
    route = ROUTES.get(normalise(path))
    return route is not None and bool(route.actions.get(key))


def _next(version: str) -> APIVersion | None:
    last = v(version)
    following = APIVersion(last.major, last.minor + 1)
    return following if following <= MAX_VERSION else None


def _url(template: str) -> str:
    return "/v2.1" + re.sub(r"\{\w+\}", SERVER, template)


def test_every_live_nova_row_is_built_or_answered_not_built() -> None:
    routes = {(m, normalise(p)) for m, p, _, _ in unbuilt.ROUTES}
    actions = {(normalise(p), k) for p, k, _, _ in unbuilt.ACTIONS}
    missing = [
        f"{r.method} {r.path}"
        for r in spec_inventory.routes()
        if not (r.removed or r.is_action_dispatch or _real_methods(r.path, r.method))
        and (r.method, normalise(r.path)) not in routes
    ]
    missing += [
        f"{a.path} {a.action}"
        for a in spec_inventory.actions()
        if not (a.flagged_removed or _real_action(a.path, a.action))
        and (normalise(a.path), a.action) not in actions
    ]
    assert not missing


def test_unbuilt_rows_have_novas_windows() -> None:
    spec = {(r.method, normalise(r.path)): r for r in spec_inventory.routes()}
    spec_actions = {(normalise(a.path), a.action): a for a in spec_inventory.actions()}
    wrong = [
        f"{m} {p}"
        for m, p, low, high in unbuilt.ROUTES
        if (spec[(m, normalise(p))].min_version, spec[(m, normalise(p))].max_version) != (low, high)
    ]
    wrong += [
        f"{p} {k}"
        for p, k, low, high in unbuilt.ACTIONS
        if (
            spec_actions[(normalise(p), k)].min_version,
            spec_actions[(normalise(p), k)].max_version,
        )
        != (low, high)
    ]
    assert not wrong


def test_no_unbuilt_row_is_built() -> None:
    built = [f"{m} {p}" for m, p, _, _ in unbuilt.ROUTES if _real_methods(p, m)]
    built += [f"{p} {k}" for p, k, _, _ in unbuilt.ACTIONS if _real_action(p, k)]
    assert not built, f"built now: delete these rows from openkeel/api/unbuilt.py: {built}"


@pytest.mark.parametrize("row", unbuilt.ROUTES, ids=lambda r: f"{r[0]} {r[1]}")
def test_unbuilt_route_is_501_in_window_and_404_after(
    api: ApiClient, row: tuple[str, str, str, str]
) -> None:
    method, template, low, high = row
    if _real_methods(template, method):
        pytest.skip("built now")
    resp = api.request(method, _url(template), json={}, version=low)
    assert (resp.status_code, resp.json()) == (501, NOT_SUPPORTED)
    assert resp.headers["x-openstack-request-id"].startswith("req-")
    assert resp.headers["openstack-api-version"] == f"compute {low}"
    after = _next(high)
    if after is not None:
        resp = api.request(method, _url(template), json={}, version=str(after))
        assert resp.status_code == 404
        assert resp.json()["itemNotFound"]["code"] == 404


@pytest.mark.parametrize("row", unbuilt.ACTIONS, ids=lambda r: f"{r[0]} {r[1]}")
def test_unbuilt_action_is_501(api: ApiClient, row: tuple[str, str, str, str]) -> None:
    template, key, low, _ = row
    if _real_action(template, key):
        pytest.skip("built now")
    resp = api.post(_url(template), {key: {}}, version=low)
    assert (resp.status_code, resp.json()) == (501, NOT_SUPPORTED)


def test_issue_examples(api: ApiClient) -> None:
    for method, path, version in (
        ("GET", "/v2.1/os-baremetal-nodes", "2.35"),
        ("GET", "/v2/os-baremetal-nodes", None),
    ):
        resp = api.request(method, path, json={}, version=version)
        assert resp.status_code == 501, (method, path)
        assert resp.headers["content-type"] == "application/json; charset=UTF-8"
        assert resp.json() == NOT_SUPPORTED


def test_unknown_action_is_still_400(api: ApiClient) -> None:
    resp = api.post(f"/v2.1/servers/{SERVER}/action", {"frobnicate": {}})
    assert resp.status_code == 400
    assert resp.json()["badRequest"]["message"] == "There is no such action: frobnicate"
