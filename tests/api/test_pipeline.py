"""The request pipeline on a synthetic route table: windows, actions, 410, 415, bodies, ids."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from openkeel.api.app import ComputeApiApp
from openkeel.api.auth import NoAuth
from openkeel.api.policy import PolicyEnforcer
from openkeel.api.request import ApiRequest, Reply
from openkeel.api.routing import RouteTable, endpoint
from openkeel.api.services import ApiServices
from openkeel.api.validation import Versioned, loose_query, multi, strict_query
from openkeel.domain.errors import Conflict
from tests.client import ApiClient

WIDGET = {
    "type": "object",
    "properties": {
        "widget": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "format": "name", "maxLength": 10},
                "size": {"type": "integer", "minimum": 1},
            },
            "required": ["name"],
            "additionalProperties": False,
        }
    },
    "required": ["widget"],
    "additionalProperties": False,
}
LIMIT = {"limit": multi({"type": ["integer", "string"], "pattern": "^[0-9]*$", "minimum": 0})}


def echo(req: ApiRequest) -> dict[str, Any]:
    return {"body": req.body, "query": req.query, "project": req.context.project_id}


def create(req: ApiRequest) -> Reply:
    return Reply(
        {"widget": req.body["widget"]}, headers=[("Location", req.self_link("widgets", "1"))]
    )


def conflict(req: ApiRequest) -> None:
    raise Conflict("Widget 1 is busy.")


def crash(req: ApiRequest) -> None:
    raise KeyError("boom")


def admin_only(req: ApiRequest) -> dict[str, Any]:
    req.context.can("os_compute_api:os-availability-zone:detail")
    return {}


@pytest.fixture
def client(services: ApiServices) -> Iterator[ApiClient]:
    table = RouteTable()
    table.add(
        "GET",
        "/widgets",
        endpoint(
            echo, query=Versioned.of(("2.1", loose_query(LIMIT)), ("2.75", strict_query(LIMIT)))
        ),
    )
    table.add("POST", "/widgets", endpoint(create, status=201, body=Versioned.of(("2.1", WIDGET))))
    table.add("GET", "/widgets/detail", endpoint(echo, since="2.10", until="2.20"))
    table.add("GET", "/widgets/{id}", endpoint(conflict))
    table.add("DELETE", "/widgets/{id}", endpoint(crash))
    table.add("GET", "/admin-widgets", endpoint(admin_only))
    table.add_action("/widgets/{id}/action", "poke", endpoint(echo, status=202, since="2.5"))
    table.gone("GET", "/old-widgets")
    app = ComputeApiApp(table, NoAuth(), PolicyEnforcer(services.conf), services)
    c = ApiClient(app)
    yield c
    c.close()


def test_version_window_404_is_a_generic_fault(client: ApiClient) -> None:
    assert client.get("/v2.1/widgets/detail", version="2.10").status_code == 200
    for ver in ("2.9", "2.21"):
        resp = client.get("/v2.1/widgets/detail", version=ver)
        assert resp.status_code == 404
        assert resp.json() == {
            "itemNotFound": {"code": 404, "message": "The resource could not be found."}
        }
        assert resp.headers["x-openstack-nova-api-version"] == ver


def test_removed_is_410_at_every_version(client: ApiClient) -> None:
    for ver in ("2.1", "2.50", "2.104"):
        resp = client.get("/v2.1/old-widgets", version=ver)
        assert resp.status_code == 410
        assert resp.json()["computeFault"]["code"] == 410


def test_action_dispatch(client: ApiClient) -> None:
    assert client.post("/v2.1/widgets/1/action", {"poke": {}}, version="2.5").status_code == 202
    assert client.post("/v2.1/widgets/1/action", {"poke": {}}, version="2.4").status_code == 404
    resp = client.post("/v2.1/widgets/1/action", {"nope": {}})
    assert resp.json() == {"badRequest": {"code": 400, "message": "There is no such action: nope"}}
    for body in ({}, {"poke": {}, "nope": {}}, [1]):
        resp = client.post("/v2.1/widgets/1/action", body)
        assert resp.json()["badRequest"]["message"] == "Malformed request body"


def test_body_validation_messages(client: ApiClient) -> None:
    resp = client.post("/v2.1/widgets", {"widget": {"name": "x", "size": "big"}})
    assert resp.status_code == 400
    assert resp.json()["badRequest"]["message"] == (
        "Invalid input for field/attribute size. Value: big. 'big' is not of type 'integer'"
    )
    resp = client.post("/v2.1/widgets", {"widget": {}})
    assert resp.json()["badRequest"]["message"] == (
        "Invalid input for field/attribute widget. Value: {}. 'name' is a required property"
    )
    resp = client.post("/v2.1/widgets", {"widget": {"name": " lead"}})
    assert resp.json()["badRequest"]["message"] == (
        "An invalid 'name' value was provided. The name must be: printable characters. "
        "Can not start or end with whitespace."
    )
    resp = client.post("/v2.1/widgets", {"thing": 1})
    assert resp.json()["badRequest"]["message"] == "'widget' is a required property"
    resp = client.post("/v2.1/widgets", {"widget": {"name": "a"}, "thing": 1})
    assert resp.json()["badRequest"]["message"] == (
        "Additional properties are not allowed ('thing' was unexpected)"
    )
    resp = client.request("POST", "/v2.1/widgets", content=b"")
    assert resp.json()["badRequest"]["message"] == "None is not of type 'object'"


def test_malformed_json_and_media_type(client: ApiClient) -> None:
    resp = client.request(
        "POST", "/v2.1/widgets", content=b"{not json", headers={"Content-Type": "application/json"}
    )
    assert resp.json() == {"badRequest": {"code": 400, "message": "Malformed request body"}}
    resp = client.request(
        "POST", "/v2.1/widgets", content=b"<x/>", headers={"Content-Type": "application/xml"}
    )
    assert resp.status_code == 415
    assert resp.json() == {"badMediaType": {"code": 415, "message": "Unsupported Content-Type"}}


def test_success_status_and_location(client: ApiClient) -> None:
    resp = client.post("/v2.1/widgets", {"widget": {"name": "a"}})
    assert resp.status_code == 201
    assert resp.headers["location"] == "http://openkeel.test/v2.1/widgets/1"
    assert resp.headers["content-type"] == "application/json"


def test_query_loose_then_strict(client: ApiClient) -> None:
    resp = client.get("/v2.1/widgets?limit=3&junk=1", version="2.74")
    assert resp.json()["query"] == {"limit": ["3"]}
    resp = client.get("/v2.1/widgets?limit=3&junk=1", version="2.75")
    assert resp.status_code == 400
    assert "junk" in resp.json()["badRequest"]["message"]
    resp = client.get("/v2.1/widgets?limit=-1")
    assert resp.json()["badRequest"]["message"] == (
        "Invalid input for query parameters limit. Value: -1. '-1' does not match '^[0-9]*$'"
    )


def test_project_id_in_url(client: ApiClient) -> None:
    resp = client.get("/v2.1/0123abcd/widgets", token="demo:0123abcd")
    assert resp.status_code == 200 and resp.json()["project"] == "0123abcd"
    resp = client.get("/v2.1/0123abcd/widgets", token="demo:ffff")
    assert resp.json() == {
        "badRequest": {
            "code": 400,
            "message": (
                "Malformed request URL: URL's project_id '0123abcd' doesn't match Context's "
                "project_id 'ffff'"
            ),
        }
    }
    resp = client.post("/v2.1/0123abcd/widgets", {"widget": {"name": "a"}}, token="u:0123abcd")
    assert resp.headers["location"] == "http://openkeel.test/v2.1/0123abcd/widgets/1"


def test_domain_errors_and_unexpected_errors(client: ApiClient) -> None:
    resp = client.get("/v2.1/widgets/1")
    assert resp.json() == {"conflictingRequest": {"code": 409, "message": "Widget 1 is busy."}}
    resp = client.delete("/v2.1/widgets/1")
    assert resp.status_code == 500
    assert resp.json()["computeFault"]["message"] == (
        "Unexpected API Error. Please contact the administrator\n<class 'KeyError'>"
    )


def test_policy_denial_is_403(client: ApiClient) -> None:
    assert client.get("/v2.1/admin-widgets").status_code == 200
    resp = client.get("/v2.1/admin-widgets", token="demo:demo")
    assert resp.json() == {
        "forbidden": {
            "code": 403,
            "message": (
                "Policy doesn't allow os_compute_api:os-availability-zone:detail to be performed."
            ),
        }
    }


def test_legacy_v2_mount_has_no_version_headers(client: ApiClient) -> None:
    resp = client.get("/v2/widgets", version="2.50")
    assert resp.status_code == 200
    assert "x-openstack-nova-api-version" not in resp.headers
    assert "vary" not in resp.headers


def test_unrouted_method_on_known_path_is_a_json_404(client: ApiClient) -> None:
    resp = client.request("PATCH", "/v2.1/widgets")
    assert resp.status_code == 404
    assert resp.headers["content-type"] == "application/json; charset=UTF-8"
    assert resp.json() == {
        "itemNotFound": {"code": 404, "message": "The resource could not be found."}
    }
    assert resp.headers["x-openstack-request-id"].startswith("req-")
    assert "openstack-api-version" not in resp.headers
