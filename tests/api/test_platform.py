"""The API platform: mounts, version negotiation, headers, faults, project ids."""

from __future__ import annotations

from tests.client import ApiClient


def test_root_lists_versions_v20_first(api: ApiClient) -> None:
    resp = api.get("/", token=None)
    assert resp.status_code == 200
    ids = [v["id"] for v in resp.json()["versions"]]
    assert ids == ["v2.0", "v2.1"]
    assert "openstack-api-version" not in resp.headers
    assert resp.headers["x-openstack-request-id"].startswith("req-")


def test_v21_document_and_self_link(api: ApiClient) -> None:
    for path in ("/v2.1", "/v2.1/"):
        body = api.get(path).json()["version"]
        assert body["version"] == "2.104" and body["min_version"] == "2.1"
        assert body["links"][0]["href"] == "http://openkeel.test/v2.1/"
    assert api.get("/v2/").json()["version"]["id"] == "v2.0"


def test_unknown_top_level_is_multiple_choices(api: ApiClient) -> None:
    resp = api.get("/v3/servers")
    assert resp.status_code == 300
    assert [c["id"] for c in resp.json()["choices"]] == ["v2.0", "v2.1"]


def test_version_headers_and_vary(api: ApiClient) -> None:
    resp = api.get("/v2.1/versions/v2.1", version="2.55")
    assert resp.status_code == 200
    assert resp.headers["openstack-api-version"] == "compute 2.55"
    assert resp.headers["x-openstack-nova-api-version"] == "2.55"
    assert resp.headers.get_list("vary") == [
        "OpenStack-API-Version",
        "X-OpenStack-Nova-API-Version",
    ]
    assert resp.headers["x-compute-request-id"] == resp.headers["x-openstack-request-id"]


def test_default_is_21_and_latest_is_max(api: ApiClient) -> None:
    assert api.get("/v2.1/versions/v2.1").headers["x-openstack-nova-api-version"] == "2.1"
    resp = api.get("/v2.1/versions/v2.1", version="latest")
    assert resp.headers["x-openstack-nova-api-version"] == "2.104"


def test_legacy_header_last_item_wins(api: ApiClient) -> None:
    resp = api.get("/v2.1/versions/v2.1", headers={"X-OpenStack-Nova-API-Version": "2.3, 2.7"})
    assert resp.headers["x-openstack-nova-api-version"] == "2.7"


def test_out_of_range_is_406_with_echo(api: ApiClient) -> None:
    resp = api.get("/v2.1/versions/v2.1", version="2.105")
    assert resp.status_code == 406
    assert resp.json() == {
        "computeFault": {
            "code": 406,
            "message": (
                "Version 2.105 is not supported by the API. Minimum is 2.1 and maximum is 2.104."
            ),
        }
    }
    assert resp.headers["openstack-api-version"] == "compute 2.105"


def test_unparsable_version_is_400_without_headers(api: ApiClient) -> None:
    for bad in ("2.a", "Latest", "2.01"):
        resp = api.get("/v2.1/versions/v2.1", version=bad)
        assert resp.status_code == 400, bad
        assert "badRequest" in resp.json()
        assert "openstack-api-version" not in resp.headers
        assert resp.headers["content-type"] == "application/json; charset=UTF-8"


def test_unknown_path_is_a_json_404(api: ApiClient) -> None:
    resp = api.get("/v2.1/no-such-thing")
    assert resp.status_code == 404
    assert resp.headers["content-type"] == "application/json; charset=UTF-8"
    assert resp.json() == {
        "itemNotFound": {"code": 404, "message": "The resource could not be found."}
    }
    assert resp.headers["x-compute-request-id"] == resp.headers["x-openstack-request-id"]
    assert "openstack-api-version" not in resp.headers
