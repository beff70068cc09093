"""``/flavors``: create, list, detail, show, update, delete per microversion, policy, errors."""

from __future__ import annotations

import importlib
import uuid
import warnings
from typing import Any

import jsonschema
import pytest
import sqlalchemy as sa

from openkeel.api.services import ApiServices
from openkeel.db.schema import api as api_schema
from tests.client import ApiClient

BASE = "http://openkeel.test"
DEMO = "demo:demo"


def _nova_schemas() -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return importlib.import_module("nova.api.openstack.compute.schemas.flavors")


def make(api: ApiClient, name: str, version: str = "2.1", **fields: Any) -> dict[str, Any]:
    body = {"name": name, "ram": 512, "vcpus": 1, "disk": 1, **fields}
    resp = api.post("/v2.1/flavors", json={"flavor": body}, version=version)
    assert resp.status_code == 200, resp.text
    flavor: dict[str, Any] = resp.json()["flavor"]
    return flavor


def links(flavorid: str) -> list[dict[str, str]]:
    return [
        {"rel": "self", "href": f"{BASE}/v2.1/flavors/{flavorid}"},
        {"rel": "bookmark", "href": f"{BASE}/flavors/{flavorid}"},
    ]


def share(api: ApiClient, flavorid: str, project: str) -> None:
    body = {"addTenantAccess": {"tenant": project}}
    assert api.post(f"/v2.1/flavors/{flavorid}/action", json=body).status_code == 200


def fault(resp: Any, status: int) -> str:
    assert resp.status_code == status, resp.text
    message: str = next(iter(resp.json().values()))["message"]
    return message


# -- create ------------------------------------------------------------------------------


def test_create_v21_body(api: ApiClient) -> None:
    body = {
        "name": "m1.small",
        "id": "10",
        "ram": 2048,
        "vcpus": 2,
        "disk": 20,
        "OS-FLV-EXT-DATA:ephemeral": 5,
        "swap": 0,
        "rxtx_factor": 2.5,
        "os-flavor-access:is_public": "false",
    }
    resp = api.post("/v2.1/flavors", json={"flavor": body})
    assert resp.status_code == 200
    assert resp.json() == {
        "flavor": {
            "id": "10",
            "name": "m1.small",
            "ram": 2048,
            "disk": 20,
            "swap": "",
            "OS-FLV-EXT-DATA:ephemeral": 5,
            "OS-FLV-DISABLED:disabled": False,
            "vcpus": 2,
            "os-flavor-access:is_public": False,
            "rxtx_factor": 2.5,
            "links": links("10"),
        }
    }


@pytest.mark.parametrize(
    ("version", "extra"),
    [
        ("2.1", {"swap": 5, "rxtx_factor": 1.0, "OS-FLV-DISABLED:disabled": False}),
        ("2.55", {"swap": 5, "rxtx_factor": 1.0, "OS-FLV-DISABLED:disabled": False}),
        ("2.61", {"rxtx_factor": 1.0, "OS-FLV-DISABLED:disabled": False, "extra_specs": {}}),
        ("2.75", {"rxtx_factor": 1.0, "OS-FLV-DISABLED:disabled": False, "extra_specs": {}}),
        ("2.102", {"extra_specs": {}}),
    ],
)
def test_create_keys_per_version(api: ApiClient, version: str, extra: dict[str, Any]) -> None:
    fields: dict[str, Any] = {"id": "f", "swap": 5}
    if version != "2.1":
        fields["description"] = "small"
    flavor = make(api, "f", version=version, **fields)
    expected = {
        "id": "f",
        "name": "f",
        "ram": 512,
        "disk": 1,
        "swap": 5,
        "OS-FLV-EXT-DATA:ephemeral": 0,
        "vcpus": 1,
        "os-flavor-access:is_public": True,
        "links": links("f"),
        **extra,
    }
    if version != "2.1":
        expected["description"] = "small"
    assert flavor == expected


@pytest.mark.oracle
@pytest.mark.parametrize("version", ["2.1", "2.55", "2.61", "2.75", "2.102"])
def test_responses_match_nova_schemas(api: ApiClient, version: str) -> None:
    nova = _nova_schemas()
    suffix = {"2.1": "", "2.55": "_v255", "2.61": "_v261", "2.75": "_v275", "2.102": "_v2102"}
    suffix_detail = {**suffix, "2.75": "_v261"}
    created = api.post(
        "/v2.1/flavors",
        json={"flavor": {"name": "a", "ram": 1, "vcpus": 1, "disk": 0}},
        version=version,
    )
    jsonschema.validate(created.json(), getattr(nova, "create_response" + suffix[version]))
    flavorid = created.json()["flavor"]["id"]
    shown = api.get(f"/v2.1/flavors/{flavorid}", version=version).json()
    jsonschema.validate(shown, getattr(nova, "show_response" + suffix[version]))
    detail = api.get("/v2.1/flavors/detail?limit=1", version=version).json()
    jsonschema.validate(detail, getattr(nova, "detail_response" + suffix_detail[version]))
    index_schema = nova.index_response if version == "2.1" else nova.index_response_v255
    jsonschema.validate(api.get("/v2.1/flavors", version=version).json(), index_schema)


def test_create_generates_uuid_when_id_absent_null_or_zero(api: ApiClient) -> None:
    for name, extra in (("a", {}), ("b", {"id": None}), ("c", {"id": 0})):
        flavorid = make(api, name, **extra)["id"]
        assert str(uuid.UUID(flavorid)) == flavorid


def test_create_numeric_id_becomes_string(api: ApiClient) -> None:
    assert make(api, "a", id=42)["id"] == "42"
    assert make(api, "b", id=1.5)["id"] == "1.5"


def test_create_conflicts(api: ApiClient) -> None:
    make(api, "dup", id="7")
    same_id = {"flavor": {"name": "other", "id": "7", "ram": 1, "vcpus": 1, "disk": 1}}
    assert fault(api.post("/v2.1/flavors", json=same_id), 409) == (
        "Flavor with ID 7 already exists."
    )
    same_name = {"flavor": {"name": "dup", "id": "8", "ram": 1, "vcpus": 1, "disk": 1}}
    assert fault(api.post("/v2.1/flavors", json=same_name), 409) == (
        "Flavor with name dup already exists."
    )


@pytest.mark.parametrize(
    ("flavor", "message"),
    [
        (
            {"ram": 1, "vcpus": 1, "disk": 1},
            "Invalid input for field/attribute flavor. Value: {'ram': 1, 'vcpus': 1, 'disk': 1}. "
            "'name' is a required property",
        ),
        (
            {"name": "x", "ram": 0, "vcpus": 1, "disk": 1},
            "Invalid input for field/attribute ram. Value: 0. 0 is less than the minimum of 1",
        ),
        (
            {"name": "x", "ram": "big", "vcpus": 1, "disk": 1},
            "Invalid input for field/attribute ram. Value: big. 'big' does not match '^[0-9]+$'",
        ),
        (
            {"name": "x", "ram": 1, "vcpus": 1, "disk": 1, "color": "red"},
            "Invalid input for field/attribute flavor. Value: {'name': 'x', 'ram': 1, 'vcpus': 1, "
            "'disk': 1, 'color': 'red'}. Additional properties are not allowed ('color' was "
            "unexpected)",
        ),
        (
            {"name": "x", "ram": 1, "vcpus": 1, "disk": 1, "description": "d"},
            "Invalid input for field/attribute flavor. Value: {'name': 'x', 'ram': 1, 'vcpus': 1, "
            "'disk': 1, 'description': 'd'}. Additional properties are not allowed "
            "('description' was unexpected)",
        ),
        (
            {"name": "x", "ram": 1.0, "vcpus": 1, "disk": 1},
            "Invalid input received: ram must be an integer",
        ),
        (
            {"name": "x", "ram": 1, "vcpus": 1, "disk": 1, "rxtx_factor": "0"},
            "Invalid input received: 'rxtx_factor' argument must be a float between 0 and "
            "3.40282e+38",
        ),
        (
            {"name": " x", "ram": 1, "vcpus": 1, "disk": 1},
            "An invalid 'name' value was provided. The name must be: printable characters. "
            "Can not start or end with whitespace.",
        ),
    ],
)
def test_create_bad_bodies(api: ApiClient, flavor: dict[str, Any], message: str) -> None:
    assert fault(api.post("/v2.1/flavors", json={"flavor": flavor}), 400) == message


def test_create_body_errors_outside_flavor(api: ApiClient) -> None:
    resp = api.post(
        "/v2.1/flavors", content=b"{not json", headers={"Content-Type": "application/json"}
    )
    assert fault(resp, 400) == "Malformed request body"
    assert fault(api.post("/v2.1/flavors", json={}), 400) == "'flavor' is a required property"
    assert fault(api.post("/v2.1/flavors", json={"flavor": []}), 400).endswith(
        "[] is not of type 'object'"
    )


def test_create_rxtx_factor_gone_in_2102(api: ApiClient) -> None:
    body = {"flavor": {"name": "x", "ram": 1, "vcpus": 1, "disk": 1, "rxtx_factor": 1.0}}
    assert fault(api.post("/v2.1/flavors", json=body, version="2.102"), 400) == (
        "Invalid input for field/attribute flavor. Value: {'name': 'x', 'ram': 1, 'vcpus': 1, "
        "'disk': 1, 'rxtx_factor': 1.0}. Additional properties are not allowed ('rxtx_factor' "
        "was unexpected)"
    )
    assert api.post("/v2.1/flavors", json=body, version="2.101").status_code == 200


def test_create_is_admin_only(api: ApiClient) -> None:
    body = {"flavor": {"name": "x", "ram": 1, "vcpus": 1, "disk": 1}}
    assert fault(api.post("/v2.1/flavors", json=body, token=DEMO), 403) == (
        "Policy doesn't allow os_compute_api:os-flavor-manage:create to be performed."
    )


def test_create_2_61_hides_specs_without_index_policy(api: ApiClient) -> None:
    body = {"flavor": {"name": "x", "ram": 1, "vcpus": 1, "disk": 1}}
    resp = api.post("/v2.1/flavors", json=body, version="2.61")
    assert resp.json()["flavor"]["extra_specs"] == {}


def test_legacy_v2_allows_spaced_names(api: ApiClient) -> None:
    body = {"flavor": {"name": " spaced ", "ram": 1, "vcpus": 1, "disk": 1, "id": "s"}}
    resp = api.post("/v2/flavors", json=body)
    assert resp.status_code == 200, resp.text
    assert resp.json()["flavor"]["name"] == "spaced"


# -- show --------------------------------------------------------------------------------


def test_show_and_not_found(api: ApiClient) -> None:
    make(api, "a", id="a1")
    assert api.get("/v2.1/flavors/a1").json()["flavor"]["name"] == "a"
    assert fault(api.get("/v2.1/flavors/nope"), 404) == "Flavor nope could not be found."


def test_show_private_flavor_visibility(api: ApiClient) -> None:
    make(api, "p", id="p1", **{"os-flavor-access:is_public": False})
    assert fault(api.get("/v2.1/flavors/p1", token=DEMO), 404) == "Flavor p1 could not be found."
    share(api, "p1", "demo")
    assert api.get("/v2.1/flavors/p1", token=DEMO).status_code == 200
    assert api.get("/v2.1/flavors/p1", token="other:other").status_code == 404


def test_show_extra_specs_follow_policy(api: ApiClient) -> None:
    make(api, "a", id="a1")
    api.post("/v2.1/flavors/a1/os-extra_specs", json={"extra_specs": {"k": "v"}})
    assert "extra_specs" not in api.get("/v2.1/flavors/a1", version="2.60").json()["flavor"]
    reader = api.get("/v2.1/flavors/a1", version="2.61", token=DEMO, headers={"X-Roles": "reader"})
    assert reader.json()["flavor"]["extra_specs"] == {"k": "v"}
    nobody = api.get("/v2.1/flavors/a1", version="2.61", token=DEMO, headers={"X-Roles": "x"})
    assert nobody.status_code == 200
    assert "extra_specs" not in nobody.json()["flavor"]


def test_show_query_params_strict_from_2102(api: ApiClient) -> None:
    make(api, "a", id="a1")
    assert api.get("/v2.1/flavors/a1?foo=1", version="2.101").status_code == 200
    assert fault(api.get("/v2.1/flavors/a1?foo=1", version="2.102"), 400) == (
        "Additional properties are not allowed ('foo' was unexpected)"
    )


def test_swap_rendering(api: ApiClient) -> None:
    make(api, "a", id="a1")
    assert api.get("/v2.1/flavors/a1", version="2.74").json()["flavor"]["swap"] == ""
    assert api.get("/v2.1/flavors/a1", version="2.75").json()["flavor"]["swap"] == 0


# -- update / delete ---------------------------------------------------------------------


def test_update_description(api: ApiClient) -> None:
    make(api, "a", id="a1", version="2.55", description="old")
    body = {"flavor": {"description": "new"}}
    resp = api.put("/v2.1/flavors/a1", json=body, version="2.55")
    assert resp.status_code == 200
    assert resp.json()["flavor"]["description"] == "new"
    assert "extra_specs" not in resp.json()["flavor"]
    assert (
        api.put("/v2.1/flavors/a1", json=body, version="2.61").json()["flavor"]["extra_specs"] == {}
    )
    cleared = api.put("/v2.1/flavors/a1", json={"flavor": {"description": None}}, version="2.55")
    assert cleared.json()["flavor"]["description"] is None


def test_update_errors(api: ApiClient) -> None:
    make(api, "a", id="a1")
    body = {"flavor": {"description": "x"}}
    assert fault(api.put("/v2.1/flavors/a1", json=body, version="2.54"), 404) == (
        "The resource could not be found."
    )
    assert fault(api.put("/v2.1/flavors/zz", json=body, version="2.55"), 404) == (
        "Flavor zz could not be found."
    )
    assert fault(api.put("/v2.1/flavors/a1", json={"flavor": {}}, version="2.55"), 400) == (
        "Invalid input for field/attribute flavor. Value: {}. 'description' is a required property"
    )
    bad = {"flavor": {"description": "x", "name": "y"}}
    assert fault(api.put("/v2.1/flavors/a1", json=bad, version="2.55"), 400) == (
        "Invalid input for field/attribute flavor. Value: {'description': 'x', 'name': 'y'}. "
        "Additional properties are not allowed ('name' was unexpected)"
    )
    assert fault(api.put("/v2.1/flavors/a1", json=body, version="2.55", token=DEMO), 403) == (
        "Policy doesn't allow os_compute_api:os-flavor-manage:update to be performed."
    )


def test_delete(api: ApiClient, services: ApiServices) -> None:
    make(api, "p", id="p1", **{"os-flavor-access:is_public": False})
    share(api, "p1", "demo")
    api.post("/v2.1/flavors/p1/os-extra_specs", json={"extra_specs": {"k": "v"}})
    assert fault(api.delete("/v2.1/flavors/p1", token=DEMO), 403) == (
        "Policy doesn't allow os_compute_api:os-flavor-manage:delete to be performed."
    )
    resp = api.delete("/v2.1/flavors/p1")
    assert resp.status_code == 202 and resp.content == b""
    assert fault(api.delete("/v2.1/flavors/p1"), 404) == "Flavor p1 could not be found."
    with services.api_db.connect() as conn:
        for table in (api_schema.flavor_projects, api_schema.flavor_extra_specs):
            assert conn.execute(sa.select(sa.func.count()).select_from(table)).scalar() == 0


# -- list --------------------------------------------------------------------------------


def ids(resp: Any) -> list[str]:
    assert resp.status_code == 200, resp.text
    return [f["id"] for f in resp.json()["flavors"]]


@pytest.fixture
def catalog(api: ApiClient) -> None:
    """Public 1 (ram 512, disk 1), 2 (ram 1024, disk 10), private 3 shared with demo,
    private 4 shared with nobody."""
    make(api, "tiny", id="1")
    make(api, "small", id="2", ram=1024, disk=10)
    make(api, "shared", id="3", **{"os-flavor-access:is_public": False})
    make(api, "secret", id="4", **{"os-flavor-access:is_public": False})
    share(api, "3", "demo")


@pytest.mark.usefixtures("catalog")
def test_list_visibility(api: ApiClient) -> None:
    assert ids(api.get("/v2.1/flavors")) == ["1", "2"]
    assert ids(api.get("/v2.1/flavors?is_public=false")) == ["3", "4"]
    assert ids(api.get("/v2.1/flavors?is_public=None")) == ["1", "2", "3", "4"]
    assert ids(api.get("/v2.1/flavors?is_public=yes")) == ["1", "2"]
    assert ids(api.get("/v2.1/flavors", token=DEMO)) == ["1", "2", "3"]
    # Non-admins cannot widen or narrow the public filter.
    assert ids(api.get("/v2.1/flavors?is_public=none", token=DEMO)) == ["1", "2", "3"]
    assert ids(api.get("/v2.1/flavors/detail", token="other:other")) == ["1", "2"]
    assert fault(api.get("/v2.1/flavors?is_public=maybe"), 400) == (
        "Invalid is_public filter [maybe]"
    )


@pytest.mark.usefixtures("catalog")
def test_admin_sees_private_flavors_shared_with_its_project(api: ApiClient) -> None:
    share(api, "4", "admin")
    assert ids(api.get("/v2.1/flavors")) == ["1", "2", "4"]


@pytest.mark.usefixtures("catalog")
def test_non_admins_do_not_see_disabled_flavors(api: ApiClient, services: ApiServices) -> None:
    flavors = api_schema.flavors
    with services.api_db.begin() as conn:
        conn.execute(sa.update(flavors).where(flavors.c.flavorid == "2").values(disabled=True))
    assert ids(api.get("/v2.1/flavors", token=DEMO)) == ["1", "3"]
    assert ids(api.get("/v2.1/flavors")) == ["1", "2"]
    assert api.get("/v2.1/flavors/2", token=DEMO).status_code == 200


@pytest.mark.usefixtures("catalog")
def test_list_min_filters(api: ApiClient) -> None:
    assert ids(api.get("/v2.1/flavors?minRam=1000")) == ["2"]
    assert ids(api.get("/v2.1/flavors?minDisk=5")) == ["2"]
    assert ids(api.get("/v2.1/flavors?minDisk=-1&minRam=1")) == ["1", "2"]
    assert fault(api.get("/v2.1/flavors?minRam=lots"), 400) == "Invalid minRam filter [lots]"
    assert fault(api.get("/v2.1/flavors?minDisk=1.5"), 400) == "Invalid minDisk filter [1.5]"


@pytest.mark.usefixtures("catalog")
@pytest.mark.parametrize("path", ["/v2.1/flavors", "/v2.1/flavors/detail"])
def test_list_min_filters_beyond_64_bits(api: ApiClient, path: str) -> None:
    """Any integer is a filter, as in Nova: past the 64 bits a driver binds (an
    OverflowError, a 500, found by tests/fuzz) it matches nothing, or everything."""
    huge = "9" * 30
    assert ids(api.get(f"{path}?minRam={huge}")) == []
    assert ids(api.get(f"{path}?minDisk={huge}")) == []
    assert ids(api.get(f"{path}?minRam=-{huge}&minDisk=-{huge}")) == ["1", "2"]


@pytest.mark.usefixtures("catalog")
def test_list_sorting(api: ApiClient) -> None:
    assert ids(api.get("/v2.1/flavors?sort_dir=desc")) == ["2", "1"]
    assert ids(api.get("/v2.1/flavors?sort_key=name&is_public=none")) == ["4", "3", "2", "1"]
    assert ids(api.get("/v2.1/flavors?sort_key=memory_mb&sort_dir=desc")) == ["2", "1"]
    message = fault(api.get("/v2.1/flavors?sort_key=color"), 400)
    assert message.startswith("Invalid input for query parameters sort_key. Value: color.")
    assert fault(api.get("/v2.1/flavors?sort_key=rxtx_factor", version="2.102"), 400).startswith(
        "Invalid input for query parameters sort_key. Value: rxtx_factor."
    )
    assert ids(api.get("/v2.1/flavors?sort_key=rxtx_factor", version="2.101")) == ["1", "2"]


@pytest.mark.usefixtures("catalog")
def test_list_paging_and_next_links(api: ApiClient) -> None:
    first = api.get("/v2.1/flavors?is_public=none&limit=2&sort_dir=asc")
    assert ids(first) == ["1", "2"]
    assert first.json()["flavors_links"] == [
        {
            "rel": "next",
            "href": f"{BASE}/v2.1/flavors?is_public=none&limit=2&sort_dir=asc&marker=2",
        }
    ]
    second = api.get("/v2.1/flavors/detail?is_public=none&limit=2&marker=2")
    assert ids(second) == ["3", "4"]
    assert second.json()["flavors_links"][0]["href"] == (
        f"{BASE}/v2.1/flavors/detail?is_public=none&limit=2&marker=4"
    )
    last = api.get("/v2.1/flavors?is_public=none&limit=2&marker=4")
    assert ids(last) == [] and "flavors_links" not in last.json()
    assert "flavors_links" not in api.get("/v2.1/flavors?limit=3").json()
    assert ids(api.get("/v2.1/flavors?limit=0")) == []
    assert fault(api.get("/v2.1/flavors?marker=zz"), 400) == "marker [zz] not found"
    # Another project's private flavor is no marker for demo.
    assert fault(api.get("/v2.1/flavors?marker=4", token=DEMO), 400) == "marker [4] not found"
    assert fault(api.get("/v2.1/flavors?limit=-1"), 400).startswith(
        "Invalid input for query parameters limit. Value: -1."
    )


@pytest.mark.usefixtures("catalog")
def test_list_paging_by_sort_key_with_duplicates(api: ApiClient) -> None:
    make(api, "tiny2", id="5")  # same ram as flavor 1
    page = api.get("/v2.1/flavors?sort_key=memory_mb&limit=1&marker=1")
    assert ids(page) == ["5"]
    assert ids(api.get("/v2.1/flavors?sort_key=memory_mb&limit=5&marker=5")) == ["2"]
    desc = api.get("/v2.1/flavors?sort_key=memory_mb&sort_dir=desc&marker=2")
    assert ids(desc) == ["5", "1"]


def test_max_limit_caps_pages(tmp_path: Any) -> None:
    from openkeel.api.factory import build_api_app
    from tests.conftest import make_services

    services = make_services(tmp_path, **{"api.max_limit": 2})
    client = ApiClient(build_api_app(services))
    try:
        for n in range(3):
            make(client, f"f{n}", id=str(n))
        page = client.get("/v2.1/flavors?limit=10")
        assert ids(page) == ["0", "1"]
        assert page.json()["flavors_links"][0]["href"] == (f"{BASE}/v2.1/flavors?limit=10&marker=1")
        assert ids(client.get("/v2.1/flavors")) == ["0", "1"]
    finally:
        client.close()
        services.api_db.dispose()


@pytest.mark.usefixtures("catalog")
def test_list_unknown_params_ignored_then_rejected(api: ApiClient) -> None:
    resp = api.get("/v2.1/flavors?limit=2&foo=bar", version="2.74")
    assert ids(resp) == ["1", "2"]
    assert "foo" not in resp.json()["flavors_links"][0]["href"]
    assert fault(api.get("/v2.1/flavors?foo=bar", version="2.75"), 400) == (
        "Additional properties are not allowed ('foo' was unexpected)"
    )


@pytest.mark.usefixtures("catalog")
def test_name_filter_from_2102(api: ApiClient) -> None:
    assert ids(api.get("/v2.1/flavors?name=^s", version="2.102")) == ["2"]
    assert ids(api.get("/v2.1/flavors?name=ny$&is_public=none", version="2.102")) == ["1"]
    assert ids(api.get("/v2.1/flavors?name=zzz", version="2.74")) == ["1", "2"]
    assert fault(api.get("/v2.1/flavors?name=s", version="2.101"), 400) == (
        "Additional properties are not allowed ('name' was unexpected)"
    )


@pytest.mark.usefixtures("catalog")
def test_list_bodies(api: ApiClient) -> None:
    brief = api.get("/v2.1/flavors?limit=5", version="2.55").json()["flavors"][0]
    assert brief == {"id": "1", "name": "tiny", "links": links("1"), "description": None}
    assert api.get("/v2.1/flavors").json()["flavors"][0] == {
        "id": "1",
        "name": "tiny",
        "links": links("1"),
    }
    detail = api.get("/v2.1/flavors/detail", version="2.61").json()["flavors"][0]
    assert detail["extra_specs"] == {} and detail["swap"] == ""


def test_detail_of_100_flavors_costs_two_queries(api: ApiClient, services: ApiServices) -> None:
    rows = [
        {"flavorid": str(n), "name": f"f{n:03}", "memory_mb": 1, "vcpus": 1, "swap": 0}
        for n in range(100)
    ]
    with services.api_db.begin() as conn:
        conn.execute(sa.insert(api_schema.flavors), rows)
        pks = conn.execute(sa.select(api_schema.flavors.c.id)).scalars().all()
        specs = [{"flavor_id": pk, "key": "k", "value": str(pk)} for pk in pks]
        conn.execute(sa.insert(api_schema.flavor_extra_specs), specs)
    statements: list[str] = []

    def count(*args: Any) -> None:
        statements.append(args[2])

    sa.event.listen(services.api_db, "before_cursor_execute", count)
    try:
        resp = api.get("/v2.1/flavors/detail", version="2.61")
    finally:
        sa.event.remove(services.api_db, "before_cursor_execute", count)
    flavors = resp.json()["flavors"]
    assert len(flavors) == 100 and all(f["extra_specs"] for f in flavors)
    assert len([s for s in statements if s.lstrip().upper().startswith("SELECT")]) == 2


@pytest.mark.oracle
def test_description_pattern_is_novas() -> None:
    from openkeel.api.resources.flavors.schemas import DESCRIPTION_PATTERN

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nova = importlib.import_module("nova.api.validation.parameter_types")
    assert nova.valid_description_regex == DESCRIPTION_PATTERN


def test_description_rejects_control_characters(api: ApiClient) -> None:
    body = {"flavor": {"name": "x", "ram": 1, "vcpus": 1, "disk": 1, "description": "a\x01"}}
    message = fault(api.post("/v2.1/flavors", json=body, version="2.55"), 400)
    assert message.startswith("Invalid input for field/attribute description. Value: a\x01. ")
    from openkeel.api.resources.flavors.schemas import DESCRIPTION_PATTERN

    assert message.endswith(f"{'a' + chr(1)!r} does not match {DESCRIPTION_PATTERN!r}")


@pytest.mark.parametrize("path", ["/v2.1/flavors", "/v2.1/flavors/detail"])
@pytest.mark.parametrize("pattern", ["(((", "["])
def test_name_filter_the_database_refuses_is_a_400(api: ApiClient, path: str, pattern: str) -> None:
    body = {"flavor": {"name": "tiny", "ram": 512, "vcpus": 1, "disk": 1, "id": "1"}}
    assert api.post("/v2.1/flavors", json=body).status_code == 200
    resp = api.get(path, params={"name": pattern}, version="2.102")
    assert resp.status_code == 400, resp.text
    message = (
        f"Invalid input for query parameters name. Value: {pattern}. '{pattern}' is not a 'regex'"
    )
    assert resp.json() == {"badRequest": {"code": 400, "message": message}}
    # Before 2.75 Nova strips the unknown parameter: no filter, no error.
    assert [f["id"] for f in api.get(path, params={"name": pattern}).json()["flavors"]] == ["1"]
