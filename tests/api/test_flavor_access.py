"""``/flavors/{id}/os-flavor-access`` and the add/removeTenantAccess actions."""

from __future__ import annotations

from typing import Any

import pytest

from tests.client import ApiClient

DEMO = "demo:demo"
ACTION = "/v2.1/flavors/p1/action"


def fault(resp: Any, status: int) -> str:
    assert resp.status_code == status, resp.text
    message: str = next(iter(resp.json().values()))["message"]
    return message


def add(tenant: Any) -> dict[str, Any]:
    return {"addTenantAccess": {"tenant": tenant}}


def remove(tenant: Any) -> dict[str, Any]:
    return {"removeTenantAccess": {"tenant": tenant}}


@pytest.fixture(autouse=True)
def flavors(api: ApiClient) -> None:
    for flavorid, public in (("p1", False), ("pub", True)):
        flavor = {"name": flavorid, "id": flavorid, "ram": 1, "vcpus": 1, "disk": 1}
        flavor["os-flavor-access:is_public"] = public
        assert api.post("/v2.1/flavors", json={"flavor": flavor}).status_code == 200


# Nova names the flavor by its database id in the access conflict / not-found messages;
# p1 is the first flavor created in a fresh database.
P1_PK = 1


def test_add_list_remove(api: ApiClient) -> None:
    assert api.get("/v2.1/flavors/p1/os-flavor-access").json() == {"flavor_access": []}
    resp = api.post(ACTION, json=add("demo"))
    assert resp.status_code == 200
    assert resp.json() == {"flavor_access": [{"flavor_id": "p1", "tenant_id": "demo"}]}
    api.post(ACTION, json=add("abc"))
    assert api.get("/v2.1/flavors/p1/os-flavor-access").json() == {
        "flavor_access": [
            {"flavor_id": "p1", "tenant_id": "demo"},
            {"flavor_id": "p1", "tenant_id": "abc"},
        ]
    }
    resp = api.post(ACTION, json=remove("demo"))
    assert resp.status_code == 200
    assert resp.json() == {"flavor_access": [{"flavor_id": "p1", "tenant_id": "abc"}]}


def test_duplicate_and_missing_access(api: ApiClient) -> None:
    api.post(ACTION, json=add("demo"))
    assert fault(api.post(ACTION, json=add("demo")), 409) == (
        f"Flavor access already exists for flavor {P1_PK} and project demo combination."
    )
    assert fault(api.post(ACTION, json=remove("zzz")), 404) == (
        f"Flavor access not found for {P1_PK} / zzz combination."
    )


def test_public_flavor(api: ApiClient) -> None:
    assert fault(api.get("/v2.1/flavors/pub/os-flavor-access"), 404) == (
        "Access list not available for public flavors."
    )
    action = "/v2.1/flavors/pub/action"
    assert fault(api.post(action, json=add("demo"), version="2.7"), 409) == (
        "Can not add access to a public flavor."
    )
    # Before 2.7 Nova records the access anyway.
    resp = api.post(action, json=add("demo"), version="2.6")
    assert resp.json() == {"flavor_access": [{"flavor_id": "pub", "tenant_id": "demo"}]}


def test_unknown_flavor(api: ApiClient) -> None:
    message = "Flavor nope could not be found."
    assert fault(api.get("/v2.1/flavors/nope/os-flavor-access"), 404) == message
    assert fault(api.post("/v2.1/flavors/nope/action", json=add("x")), 404) == message
    assert fault(api.post("/v2.1/flavors/nope/action", json=remove("x")), 404) == message


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"addTenantAccess": {}}, "'tenant' is a required property"),
        ({"addTenantAccess": {"tenant": ""}}, "should be non-empty"),
        ({"addTenantAccess": {"tenant": 5}}, "5 is not of type 'string'"),
        ({"removeTenantAccess": {"tenant": "x", "y": 1}}, "('y' was unexpected)"),
        ({"addTenantAccess": {"tenant": "a"}, "extra": 1}, "Malformed request body"),
        ({"grantAccess": {"tenant": "a"}}, "There is no such action: grantAccess"),
    ],
)
def test_bad_action_bodies(api: ApiClient, body: dict[str, Any], message: str) -> None:
    assert fault(api.post(ACTION, json=body), 400).endswith(message)


def test_policy(api: ApiClient) -> None:
    assert fault(api.get("/v2.1/flavors/p1/os-flavor-access", token=DEMO), 403) == (
        "Policy doesn't allow os_compute_api:os-flavor-access to be performed."
    )
    assert fault(api.post(ACTION, json=add("demo"), token=DEMO), 403) == (
        "Policy doesn't allow os_compute_api:os-flavor-access:add_tenant_access to be performed."
    )
    assert fault(api.post(ACTION, json=remove("demo"), token=DEMO), 403) == (
        "Policy doesn't allow os_compute_api:os-flavor-access:remove_tenant_access to be performed."
    )


def test_query_params_strict_from_2102(api: ApiClient) -> None:
    path = "/v2.1/flavors/p1/os-flavor-access?x=1"
    assert api.get(path, version="2.101").status_code == 200
    assert fault(api.get(path, version="2.102"), 400) == (
        "Additional properties are not allowed ('x' was unexpected)"
    )
