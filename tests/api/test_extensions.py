"""``GET /extensions`` and ``GET /extensions/{alias}`` against Nova 34's own extension data.

Nova's module (``nova.api.openstack.compute.extension_info``) is imported here as a test-only
oracle: the bodies must equal its lists record for record, in order.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from oslo_policy import opts as policy_opts

from openkeel.api.factory import build_api_app
from tests.client import ApiClient
from tests.conformance.nova_oracle import quiet_import
from tests.conftest import make_services

nova_extensions = quiet_import("nova.api.openstack.compute.extension_info")
NOT_FOUND = {"itemNotFound": {"code": 404, "message": "The resource could not be found."}}


def _strict_error(name: str) -> dict[str, Any]:
    message = f"Additional properties are not allowed ('{name}' was unexpected)"
    return {"badRequest": {"code": 400, "message": message}}


@pytest.mark.parametrize("version", ["2.1", "2.50", "2.101", "2.102", "2.104"])
def test_index_is_novas_list(api: ApiClient, version: str) -> None:
    resp = api.get("/v2.1/extensions", version=version, token="bob:proj")
    assert resp.status_code == 200
    assert resp.json() == {"extensions": nova_extensions.EXTENSION_LIST}
    assert len(resp.json()["extensions"]) == 99


def test_index_on_legacy_v2_adds_vif_net(api: ApiClient) -> None:
    resp = api.get("/v2/extensions")
    assert resp.status_code == 200
    body = resp.json()["extensions"]
    assert body == nova_extensions.EXTENSION_LIST_LEGACY_V2_COMPATIBLE
    assert [e["alias"] for e in body].index("OS-EXT-VIF-NET") == 8


def test_show_every_alias(api: ApiClient) -> None:
    for record in nova_extensions.EXTENSION_LIST:
        resp = api.get(f"/v2.1/extensions/{record['alias']}", version="2.104")
        assert (resp.status_code, resp.json()) == (200, {"extension": record})


def test_show_legacy_only_alias(api: ApiClient) -> None:
    resp = api.get("/v2/extensions/OS-EXT-VIF-NET")
    assert resp.status_code == 200
    assert resp.json()["extension"]["name"] == "ExtendedVIFNet"
    resp = api.get("/v2.1/extensions/OS-EXT-VIF-NET")
    assert (resp.status_code, resp.json()) == (404, NOT_FOUND)


@pytest.mark.parametrize("alias", ["nope", "os-VOLUMES", "OS-EXT-VIF-NET"])
def test_show_unknown_alias_is_404(api: ApiClient, alias: str) -> None:
    resp = api.get(f"/v2.1/extensions/{alias}", version="2.1")
    assert (resp.status_code, resp.json()) == (404, NOT_FOUND)


@pytest.mark.parametrize("path", ["/v2.1/extensions", "/v2.1/extensions/os-volumes"])
def test_unknown_query_ignored_before_2102(api: ApiClient, path: str) -> None:
    resp = api.get(path, version="2.101", params={"x": "1", "limit": "2"})
    assert resp.status_code == 200


@pytest.mark.parametrize("path", ["/v2.1/extensions", "/v2.1/extensions/os-volumes"])
def test_unknown_query_rejected_from_2102(api: ApiClient, path: str) -> None:
    resp = api.get(path, version="2.102", params={"x": "1"})
    assert (resp.status_code, resp.json()) == (400, _strict_error("x"))


def test_unknown_alias_with_strict_query_is_400_first(api: ApiClient) -> None:
    resp = api.get("/v2.1/extensions/nope", version="2.104", params={"x": "1"})
    assert (resp.status_code, resp.json()) == (400, _strict_error("x"))


def test_project_id_in_url(api: ApiClient) -> None:
    resp = api.get("/v2.1/abc123/extensions/os-volumes", token="admin:abc123")
    assert resp.status_code == 200
    assert resp.json()["extension"]["alias"] == "os-volumes"


def test_policy_denial_is_403(tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text('"os_compute_api:extensions": "role:admin"\n')
    services = make_services(tmp_path)
    policy_opts.set_defaults(services.conf, policy_file=str(policy))
    client = ApiClient(build_api_app(services))
    try:
        for path in ("/v2.1/extensions", "/v2.1/extensions/os-volumes", "/v2.1/extensions/nope"):
            resp = client.get(path, token="bob:proj")
            assert resp.status_code == 403, path
            assert resp.json() == {
                "forbidden": {
                    "code": 403,
                    "message": "Policy doesn't allow os_compute_api:extensions to be performed.",
                }
            }
        assert client.get("/v2.1/extensions", token="admin:proj").status_code == 200
    finally:
        client.close()
        services.api_db.dispose()
