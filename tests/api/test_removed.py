"""Removed Nova APIs: 410 Gone at every microversion, in Nova's order of checks.

Expected answers were taken from Nova 34's own router (webob requests against
``APIRouterV21``): 410 comes after authentication, version negotiation, content type, body
parsing and the URL project check, and no policy is checked. ``os-getRDPConsole`` answers 400
inside 2.1-2.5 and 404 above.
"""

from __future__ import annotations

import httpx
import pytest

from openkeel.api.resources.removed.routes import REMOVED
from tests import spec_inventory
from tests.client import ApiClient
from tests.spec_inventory import ActionRow, RouteRow

GONE = {
    "computeFault": {
        "code": 410,
        "message": "This resource is no longer available. No forwarding address is given.",
    }
}
RDP_400 = {
    "badRequest": {
        "code": 400,
        "message": "The server could not comply with the request since it is either "
        "malformed or otherwise incorrect.",
    }
}
NOT_FOUND = {"itemNotFound": {"code": 404, "message": "The resource could not be found."}}

REMOVED_ROUTES = [row for row in spec_inventory.routes() if row.removed]
REMOVED_ACTIONS = [row for row in spec_inventory.actions() if row.removed]
VERSIONS = ("2.1", "2.36", "2.75", "2.104")


def _concrete(template: str) -> str:
    """A request path for a template: every placeholder becomes a plausible id."""
    parts = ["9d1c2f4e-7b61-4a51-b0f4-3b8a6f7c0e11" if p.startswith("{") else p for p in
             template.strip("/").split("/")]  # fmt: skip
    return "/v2.1/" + "/".join(parts)


def _send(api: ApiClient, method: str, template: str, version: str) -> httpx.Response:
    body: dict[str, object] | None = {} if method in ("POST", "PUT") else None
    return api.request(method, _concrete(template), json=body, version=version)


def test_spec_lists_46_removed_routes_and_7_removed_actions() -> None:
    assert len(REMOVED_ROUTES) == 46
    assert len(REMOVED_ACTIONS) == 7


def test_table_matches_spec_with_release() -> None:
    ours = {(r.method, r.template, r.action, r.release) for r in REMOVED}
    spec: set[tuple[str, str, str | None, str | None]]
    spec = {(r.method, r.path, None, r.removed_in) for r in REMOVED_ROUTES}
    spec |= {("POST", a.path, a.action, a.removed_in) for a in REMOVED_ACTIONS}
    assert ours == spec


@pytest.mark.parametrize("row", REMOVED_ROUTES, ids=lambda r: f"{r.method} {r.path}")
def test_removed_route_is_gone_at_every_version(api: ApiClient, row: RouteRow) -> None:
    for version in VERSIONS:
        resp = _send(api, row.method, row.path, version)
        assert (resp.status_code, resp.json()) == (410, GONE), version
        assert resp.headers["OpenStack-API-Version"] == f"compute {version}"


@pytest.mark.parametrize("row", REMOVED_ACTIONS, ids=lambda r: f"{r.path} {r.action}")
def test_removed_action_is_gone_at_every_version(api: ApiClient, row: ActionRow) -> None:
    for version in VERSIONS:
        for value in (None, {}, {"anything": [1, 2]}):
            resp = api.post(_concrete(row.path), json={row.action: value}, version=version)
            assert (resp.status_code, resp.json()) == (410, GONE), (version, value)


def test_gone_without_policy_for_plain_reader(api: ApiClient) -> None:
    resp = api.get("/v2.1/os-cells", token="bob:proj", headers={"X-Roles": "reader"})
    assert (resp.status_code, resp.json()) == (410, GONE)
    resp = api.post(
        _concrete("/servers/{id}/action"),
        json={"resetNetwork": None},
        token="bob:proj",
        headers={"X-Roles": "nobody"},
    )
    assert (resp.status_code, resp.json()) == (410, GONE)


def test_gone_on_legacy_v2_mount_without_version_headers(api: ApiClient) -> None:
    resp = api.get("/v2/os-fping")
    assert (resp.status_code, resp.json()) == (410, GONE)
    assert "OpenStack-API-Version" not in resp.headers
    resp = api.post("/v2/os-fixed-ips/1.2.3.4/action", json={"reserve": None})
    assert (resp.status_code, resp.json()) == (410, GONE)


def test_gone_with_project_id_in_url(api: ApiClient) -> None:
    resp = api.get("/v2.1/0123abc/os-agents", token="admin:0123abc")
    assert (resp.status_code, resp.json()) == (410, GONE)


def test_project_mismatch_is_checked_before_gone(api: ApiClient) -> None:
    resp = api.get("/v2.1/0123/os-agents", token="admin:demo")
    assert resp.status_code == 400
    assert resp.json()["badRequest"]["message"] == (
        "Malformed request URL: URL's project_id '0123' doesn't match Context's project_id 'demo'"
    )


def test_version_negotiation_is_checked_before_gone(api: ApiClient) -> None:
    resp = api.get("/v2.1/os-fping", version="2.105")
    assert resp.status_code == 406
    assert resp.json()["computeFault"]["message"] == (
        "Version 2.105 is not supported by the API. Minimum is 2.1 and maximum is 2.104."
    )
    resp = api.get("/v2.1/os-fping", version="abc")
    assert resp.status_code == 400
    assert resp.json()["badRequest"]["message"] == (
        "API Version String abc is of invalid format. Must be of format MajorNum.MinorNum."
    )


def test_authentication_is_checked_before_gone(api: ApiClient) -> None:
    resp = api.get("/v2.1/os-cells", token=":no-user")
    assert resp.status_code == 401


def test_body_parsing_and_content_type_come_before_gone(api: ApiClient) -> None:
    resp = api.post(
        "/v2.1/os-agents", content=b"{bad", headers={"Content-Type": "application/json"}
    )
    assert (resp.status_code, resp.json()) == (
        400,
        {"badRequest": {"code": 400, "message": "Malformed request body"}},
    )
    resp = api.post("/v2.1/os-agents", content=b"<a/>", headers={"Content-Type": "text/xml"})
    assert (resp.status_code, resp.json()) == (
        415,
        {"badMediaType": {"code": 415, "message": "Unsupported Content-Type"}},
    )


def test_any_body_or_none_is_gone(api: ApiClient) -> None:
    for content in (b"", b"[1]", b'{"a": 1, "b": 2}'):
        resp = api.post(
            "/v2.1/os-networks/add", content=content, headers={"Content-Type": "application/json"}
        )
        assert (resp.status_code, resp.json()) == (410, GONE), content


@pytest.mark.parametrize("version", ["2.1", "2.3", "2.5"])
def test_rdp_console_is_400_inside_its_window(api: ApiClient, version: str) -> None:
    for value in ({"type": "rdp-html5"}, None, {"bogus": 1}):
        resp = api.post(
            _concrete("/servers/{id}/action"),
            json={"os-getRDPConsole": value},
            version=version,
            token="bob:proj",
            headers={"X-Roles": "reader"},
        )
        assert (resp.status_code, resp.json()) == (400, RDP_400), value


def test_rdp_console_on_legacy_v2_is_400(api: ApiClient) -> None:
    resp = api.post("/v2/servers/x/action", json={"os-getRDPConsole": {"type": "rdp-html5"}})
    assert (resp.status_code, resp.json()) == (400, RDP_400)


@pytest.mark.parametrize("version", ["2.6", "2.50", "2.104"])
def test_rdp_console_is_404_above_25(api: ApiClient, version: str) -> None:
    resp = api.post(
        _concrete("/servers/{id}/action"),
        json={"os-getRDPConsole": {"type": "rdp-html5"}},
        version=version,
    )
    assert (resp.status_code, resp.json()) == (404, NOT_FOUND)
