"""``/os-aggregates``: CRUD, host actions against cell compute services, zone rules, the 2.41
uuid, the 2.81 image cache request, policies and Nova's error messages."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
import sqlalchemy as sa

from openkeel.api.services import ApiServices
from openkeel.db.engine import make_engine
from openkeel.db.schema import api as api_tables
from openkeel.db.schema import cell as cell_tables
from tests.client import ApiClient

AGG = "/v2.1/os-aggregates"
IMAGE = "6b8c4b2a-7a57-4b8a-9f0d-2f3c0b6a1e11"
FIELDS = {"id", "name", "hosts", "metadata", "created_at", "updated_at", "deleted_at", "deleted",
          "availability_zone"}  # fmt: skip


@pytest.fixture
def cell(services: ApiServices, tmp_path: Path) -> sa.Engine:
    """One cell DB, mapped in the API DB, with compute hosts h1 and h2 (h2 unmapped)."""
    engine = make_engine(f"sqlite:///{tmp_path / 'cell1.sqlite'}")
    cell_tables.metadata.create_all(engine)
    services.cell_dbs["cell-uuid-1"] = engine
    with services.api_db.begin() as conn:
        cell_id = conn.execute(
            sa.insert(api_tables.cell_mappings).values(uuid="cell-uuid-1", name="cell1")
        ).inserted_primary_key
        assert cell_id is not None
        conn.execute(sa.insert(api_tables.host_mappings).values(cell_id=cell_id[0], host="h1"))
    with engine.begin() as conn:
        for host, binary in (
            ("h1", "nova-compute"),
            ("h2", "nova-compute"),
            ("c", "nova-conductor"),
        ):
            conn.execute(
                sa.insert(cell_tables.services).values(
                    host=host, binary=binary, topic=binary[5:], report_count=0, deleted=0
                )
            )
    return engine


def _create(api: ApiClient, name: str, zone: str | None = None, version: str = "2.1") -> Any:
    body: dict[str, Any] = {"name": name}
    if zone is not None:
        body["availability_zone"] = zone
    resp = api.post(AGG, json={"aggregate": body}, version=version)
    assert resp.status_code == 200, resp.text
    return resp.json()["aggregate"]


def _action(api: ApiClient, agg_id: object, body: Any, version: str = "2.1") -> httpx.Response:
    return api.post(f"{AGG}/{agg_id}/action", json=body, version=version)


def _error(resp: httpx.Response, status: int, message: str) -> None:
    assert resp.status_code == status, resp.text
    assert next(iter(resp.json().values())) == {"code": status, "message": message}


def test_create_show_list_delete(api: ApiClient) -> None:
    created = _create(api, "a1", "z1")
    assert set(created) == FIELDS - {"hosts", "metadata"}
    assert (created["name"], created["availability_zone"], created["deleted"]) == (
        "a1",
        "z1",
        False,
    )
    assert created["updated_at"] is None and created["deleted_at"] is None
    shown = api.get(f"{AGG}/{created['id']}").json()["aggregate"]
    assert set(shown) == FIELDS
    assert (shown["hosts"], shown["metadata"]) == ([], {"availability_zone": "z1"})
    listed = api.get(AGG).json()["aggregates"]
    assert [a["id"] for a in listed] == [created["id"]]
    assert api.delete(f"{AGG}/{created['id']}").status_code == 200
    _error(api.get(f"{AGG}/{created['id']}"), 404, f"Aggregate {created['id']} could not be found.")
    assert api.get(AGG).json() == {"aggregates": []}


def test_uuid_from_2_41(api: ApiClient) -> None:
    created = _create(api, "a1", version="2.41")
    assert set(created) == FIELDS - {"hosts", "metadata"} | {"uuid"}
    assert "uuid" not in api.get(f"{AGG}/{created['id']}", version="2.40").json()["aggregate"]
    shown = api.get(f"{AGG}/{created['id']}", version="2.41").json()["aggregate"]
    assert shown["uuid"] == created["uuid"] and set(shown) == FIELDS | {"uuid"}


def test_create_errors(api: ApiClient) -> None:
    _create(api, "a1")
    _error(api.post(AGG, json={"aggregate": {"name": "a1"}}), 409, "Aggregate a1 already exists.")
    resp = api.post(AGG, json={"aggregate": {"name": "x", "availability_zone": ""}})
    assert resp.status_code == 400
    resp = api.post(AGG, json={"aggregate": {"name": "x", "availability_zone": "a:b"}})
    assert resp.status_code == 400
    assert api.post(AGG, json={"aggregate": {}}).status_code == 400


def test_bad_ids(api: ApiClient) -> None:
    for resp in (
        api.get(f"{AGG}/abc"),
        api.delete(f"{AGG}/abc"),
        api.put(f"{AGG}/abc", json={"aggregate": {"name": "n"}}),
        _action(api, "abc", {"set_metadata": {"metadata": {}}}),
    ):
        _error(resp, 400, "Invalid input received: id must be an integer")
    _error(api.delete(f"{AGG}/42"), 404, "Aggregate 42 could not be found.")


def test_update_name_and_zone(api: ApiClient) -> None:
    agg = _create(api, "a1")
    _create(api, "a2")
    resp = api.put(
        f"{AGG}/{agg['id']}", json={"aggregate": {"name": "b1", "availability_zone": "z"}}
    )
    assert resp.status_code == 200
    updated = resp.json()["aggregate"]
    assert (updated["name"], updated["availability_zone"]) == ("b1", "z")
    assert updated["metadata"] == {"availability_zone": "z"} and updated["updated_at"]
    _error(
        api.put(f"{AGG}/{agg['id']}", json={"aggregate": {"name": "a2"}}),
        409,
        "Aggregate a2 already exists.",
    )
    _error(
        api.put(f"{AGG}/{agg['id']}", json={"aggregate": {"availability_zone": None}}),
        400,
        f"Cannot update aggregate {agg['id']}. Reason: Aggregate b1 does not support empty "
        "named availability zone.",
    )
    assert api.put(f"{AGG}/{agg['id']}", json={"aggregate": {}}).status_code == 400
    _error(
        api.put(f"{AGG}/99", json={"aggregate": {"name": "q"}}),
        404,
        "Aggregate 99 could not be found.",
    )


def test_set_metadata_merges_and_deletes(api: ApiClient) -> None:
    agg = _create(api, "a1", "z1")
    resp = _action(api, agg["id"], {"set_metadata": {"metadata": {"k": "v", "x": "y"}}})
    assert resp.json()["aggregate"]["metadata"] == {"availability_zone": "z1", "k": "v", "x": "y"}
    resp = _action(api, agg["id"], {"set_metadata": {"metadata": {"k": None, "nope": None}}})
    assert resp.json()["aggregate"]["metadata"] == {"availability_zone": "z1", "x": "y"}
    _error(
        _action(api, agg["id"], {"set_metadata": {"metadata": {"availability_zone": None}}}),
        400,
        f"Cannot update metadata of aggregate {agg['id']}. Reason: Aggregate a1 does not "
        "support empty named availability zone.",
    )
    _error(
        _action(api, 7, {"set_metadata": {"metadata": {}}}), 404, "Aggregate 7 could not be found."
    )


def test_add_and_remove_host(api: ApiClient, cell: sa.Engine) -> None:
    agg = _create(api, "a1", "z1")
    for host in ("h1", "h2"):  # h2 has no host mapping: found by searching the cells
        resp = _action(api, agg["id"], {"add_host": {"host": host}})
        assert resp.status_code == 200, resp.text
    assert api.get(f"{AGG}/{agg['id']}").json()["aggregate"]["hosts"] == ["h1", "h2"]
    _error(
        _action(api, agg["id"], {"add_host": {"host": "h1"}}),
        409,
        f"Aggregate {agg['id']} already has host h1.",
    )
    for host in ("nope", "c"):
        _error(
            _action(api, agg["id"], {"add_host": {"host": host}}),
            404,
            f"Compute host {host} could not be found.",
        )
    _error(_action(api, 99, {"add_host": {"host": "h1"}}), 404, "Aggregate 99 could not be found.")
    _error(
        api.delete(f"{AGG}/{agg['id']}"),
        400,
        f"Cannot remove host from aggregate {agg['id']}. Reason: Host aggregate is not empty.",
    )
    resp = _action(api, agg["id"], {"remove_host": {"host": "h1"}})
    assert resp.status_code == 200 and resp.json()["aggregate"]["hosts"] == ["h2"]
    for agg_id, host in ((agg["id"], "h1"), (agg["id"], "nope"), (99, "h2")):
        _error(
            _action(api, agg_id, {"remove_host": {"host": host}}),
            404,
            f"Cannot remove host {host} in aggregate {agg_id}",
        )


def test_zone_conflicts(api: ApiClient, cell: sa.Engine) -> None:
    first = _create(api, "a1", "z1")
    second = _create(api, "a2", "z2")
    plain = _create(api, "a3")
    assert _action(api, first["id"], {"add_host": {"host": "h1"}}).status_code == 200
    _error(
        _action(api, second["id"], {"add_host": {"host": "h1"}}),
        409,
        f"Cannot add host to aggregate {second['id']}. Reason: One or more hosts already in "
        "availability zone(s) ['z1'].",
    )
    assert _action(api, plain["id"], {"add_host": {"host": "h1"}}).status_code == 200
    _error(
        api.put(f"{AGG}/{plain['id']}", json={"aggregate": {"availability_zone": "z2"}}),
        400,
        f"Cannot update aggregate {plain['id']}. Reason: One or more hosts already in "
        "availability zone(s) ['z1'].",
    )
    resp = api.put(f"{AGG}/{plain['id']}", json={"aggregate": {"availability_zone": "z1"}})
    assert resp.status_code == 200


def test_zone_change_refused_with_instances(api: ApiClient, cell: sa.Engine) -> None:
    agg = _create(api, "a1", "z1")
    with cell.begin() as conn:
        conn.execute(sa.insert(cell_tables.instances).values(uuid="i1", host="h1", deleted=0))
    _error(
        _action(api, agg["id"], {"add_host": {"host": "h1"}}),
        409,
        f"Cannot add host to aggregate {agg['id']}. Reason: The host cannot be added to the "
        "aggregate as the availability zone of the host would change from 'None' to 'z1' but "
        "the host already has 1 instance(s). Changing the AZ of an existing instance is not "
        "supported by this action. Move the instances away from this host then try again. If "
        "you need to move the instances between AZs then you can use shelve_offload and "
        "unshelve to achieve this..",
    )
    plain = _create(api, "a2")
    assert _action(api, plain["id"], {"add_host": {"host": "h1"}}).status_code == 200
    _error(
        _action(api, plain["id"], {"set_metadata": {"metadata": {"availability_zone": "z9"}}}),
        400,
        f"Cannot update metadata of aggregate {plain['id']}. Reason: One or more hosts contain "
        "instances in this zone.",
    )


def test_images_2_81(api: ApiClient) -> None:
    agg = _create(api, "a1")
    path = f"{AGG}/{agg['id']}/images"
    body = {"cache": [{"id": IMAGE}]}
    assert api.post(path, json=body, version="2.80").status_code == 404
    resp = api.post(path, json=body, version="2.81")
    assert resp.status_code == 202 and resp.content == b""
    _error(
        api.post(path, json={"cache": [{"id": IMAGE}, {"id": IMAGE}]}, version="2.81"),
        400,
        "Duplicate images in request",
    )
    assert api.post(path, json={"cache": []}, version="2.81").status_code == 400
    _error(
        api.post(f"{AGG}/99/images", json=body, version="2.81"),
        404,
        "Aggregate 99 could not be found.",
    )
    _error(
        api.post(path, json=body, version="2.81", token="u1:p1"),
        403,
        "Policy doesn't allow compute:aggregates:images to be performed.",
    )


def test_query_strict_from_2_102(api: ApiClient) -> None:
    assert api.get(f"{AGG}?foo=1", version="2.101").status_code == 200
    assert api.get(f"{AGG}?foo=1", version="2.102").status_code == 400


@pytest.mark.parametrize(
    ("method", "path", "body", "rule"),
    [
        ("GET", AGG, None, "index"),
        ("POST", AGG, {"aggregate": {"name": "n"}}, "create"),
        ("GET", f"{AGG}/1", None, "show"),
        ("PUT", f"{AGG}/1", {"aggregate": {"name": "n"}}, "update"),
        ("DELETE", f"{AGG}/1", None, "delete"),
        ("POST", f"{AGG}/1/action", {"add_host": {"host": "h"}}, "add_host"),
        ("POST", f"{AGG}/1/action", {"remove_host": {"host": "h"}}, "remove_host"),
        ("POST", f"{AGG}/1/action", {"set_metadata": {"metadata": {}}}, "set_metadata"),
    ],
)
def test_admin_only(api: ApiClient, method: str, path: str, body: Any, rule: str) -> None:
    resp = api.request(method, path, json=body, token="u1:p1")
    _error(resp, 403, f"Policy doesn't allow os_compute_api:os-aggregates:{rule} to be performed.")


@pytest.mark.parametrize(
    "body",
    [{"add_host": {}}, {"add_host": "((("}, {"remove_host": None}, {"set_metadata": []}],
)
def test_legacy_v2_actions_validate_their_body(api: ApiClient, body: Any) -> None:
    """/v2 validates with the 2.1 schema (Nova's unversioned one), relaxed: a body the
    handler cannot read is a 400, not a KeyError/TypeError 500 (found by tests/fuzz)."""
    agg_id = _create(api, "a1")["id"]
    resp = api.post(f"/v2/os-aggregates/{agg_id}/action", json=body)
    assert resp.status_code == 400, resp.text
    assert resp.json()["badRequest"]["message"].startswith("Invalid input for field/attribute")
