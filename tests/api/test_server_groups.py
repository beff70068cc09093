"""``/os-server-groups``: bodies per microversion window (2.13, 2.15, 2.64), rules, the
``server_groups`` quota, listing scope and paging, policies and Nova's messages."""

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

SG = "/v2.1/os-server-groups"
LIVE, GONE, BUILDING, UNMAPPED = (f"00000000-0000-0000-0000-00000000000{i}" for i in range(2, 6))
USER = "u1:p1"


def _create(
    api: ApiClient, body: dict[str, Any], version: str = "2.1", token: str = USER
) -> httpx.Response:
    return api.post(SG, json={"server_group": body}, version=version, token=token)


def _error(resp: httpx.Response, status: int, message: str) -> None:
    assert resp.status_code == status, resp.text
    assert next(iter(resp.json().values())) == {"code": status, "message": message}


@pytest.mark.parametrize(
    ("version", "keys"),
    [
        ("2.1", {"id", "name", "policies", "metadata", "members"}),
        ("2.13", {"id", "name", "policies", "metadata", "members", "project_id", "user_id"}),
        ("2.64", {"id", "name", "policy", "rules", "members", "project_id", "user_id"}),
    ],
)
def test_views_per_version(api: ApiClient, version: str, keys: set[str]) -> None:
    body = (
        {"name": "g", "policy": "affinity"}
        if version == "2.64"
        else {"name": "g", "policies": ["affinity"]}
    )
    resp = _create(api, body, version)
    assert resp.status_code == 200, resp.text
    created = resp.json()["server_group"]
    assert set(created) == keys and created["members"] == []
    shown = api.get(f"{SG}/{created['id']}", version=version, token=USER).json()["server_group"]
    assert shown == created
    assert api.get(SG, version=version, token=USER).json() == {"server_groups": [created]}


def test_legacy_group_at_2_64_and_modern_before(api: ApiClient) -> None:
    old = _create(api, {"name": "g", "policies": ["anti-affinity"]}).json()["server_group"]
    shown = api.get(f"{SG}/{old['id']}", version="2.64", token=USER).json()["server_group"]
    assert (shown["policy"], shown["rules"]) == ("anti-affinity", {})
    new = _create(
        api, {"name": "h", "policy": "anti-affinity", "rules": {"max_server_per_host": "1"}}, "2.64"
    )
    assert new.json()["server_group"]["rules"] == {"max_server_per_host": 1}
    gid = new.json()["server_group"]["id"]
    shown = api.get(f"{SG}/{gid}", version="2.63", token=USER).json()["server_group"]
    assert (shown["policies"], shown["metadata"]) == (["anti-affinity"], {})


def test_soft_policies_from_2_15(api: ApiClient) -> None:
    body = {"name": "g", "policies": ["soft-affinity"]}
    assert _create(api, body, "2.14").status_code == 400
    resp = _create(api, body, "2.15")
    assert resp.status_code == 200 and resp.json()["server_group"]["policies"] == ["soft-affinity"]
    assert _create(api, {"name": "g", "policies": ["affinity"]}, "2.64").status_code == 400
    assert _create(api, {"name": "g", "policy": "bogus"}, "2.64").status_code == 400
    assert _create(api, {"name": "g", "policies": ["affinity", "anti-affinity"]}).status_code == 400


def test_rules(api: ApiClient, services: ApiServices, tmp_path: Path) -> None:
    _error(
        _create(
            api, {"name": "g", "policy": "affinity", "rules": {"max_server_per_host": 2}}, "2.64"
        ),
        400,
        "Only anti-affinity policy supports rules.",
    )
    wide = {"name": "g", "policy": "anti-affinity", "rules": {"max_server_per_host": 2}}
    _error(
        _create(api, wide, "2.64"),
        409,
        "Creating an anti-affinity group with rule max_server_per_host > 1 is not yet supported.",
    )
    assert _create(api, {**wide, "rules": {"max_server_per_host": 0}}, "2.64").status_code == 400
    engine = make_engine(f"sqlite:///{tmp_path / 'cell1.sqlite'}")
    cell_tables.metadata.create_all(engine)
    services.cell_dbs["c1"] = engine
    with engine.begin() as conn:
        conn.execute(
            sa.insert(cell_tables.services).values(
                host="h1",
                binary="nova-compute",
                topic="compute",
                report_count=0,
                deleted=0,
                version=66,
            )
        )
    resp = _create(api, wide, "2.64")
    assert resp.status_code == 200 and resp.json()["server_group"]["rules"] == {
        "max_server_per_host": 2
    }


def test_quota(api: ApiClient, services: ApiServices) -> None:
    with services.api_db.begin() as conn:
        conn.execute(
            sa.insert(api_tables.quotas).values(
                project_id="p1", resource="server_groups", hard_limit=1
            )
        )
    assert _create(api, {"name": "g", "policies": ["affinity"]}).status_code == 200
    _error(
        _create(api, {"name": "g", "policies": ["affinity"]}),
        403,
        "Quota exceeded, too many server groups.",
    )
    assert _create(api, {"name": "g", "policies": ["affinity"]}, token="u2:p2").status_code == 200
    assert api.get(SG, token=USER).json()["server_groups"][0]["name"] == "g"


def test_list_scope_and_paging(api: ApiClient) -> None:
    ids = [
        _create(api, {"name": f"g{i}", "policies": ["affinity"]}).json()["server_group"]["id"]
        for i in range(3)
    ]
    other = _create(api, {"name": "x", "policies": ["affinity"]}, token="u2:p2").json()[
        "server_group"
    ]["id"]

    def listed(query: str = "", token: str = USER) -> list[str]:
        return [g["id"] for g in api.get(f"{SG}{query}", token=token).json()["server_groups"]]

    assert listed() == ids
    assert listed("?all_projects=True") == ids  # ignored for non-admins
    assert listed("?all_projects=1", token="admin:admin") == [*ids, other]
    assert listed(token="admin:admin") == []
    assert listed("?limit=2") == ids[:2]
    assert listed("?offset=1&limit=1") == ids[1:2]
    assert listed("?limit=0") == ids
    assert api.get(f"{SG}?limit=-1", token=USER).status_code == 400
    assert api.get(f"{SG}?foo=1", token=USER, version="2.74").status_code == 200
    assert api.get(f"{SG}?foo=1", token=USER, version="2.75").status_code == 400


def test_members_only_live_instances(api: ApiClient, services: ApiServices, tmp_path: Path) -> None:
    gid = _create(api, {"name": "g", "policies": ["affinity"]}).json()["server_group"]["id"]
    engine = make_engine(f"sqlite:///{tmp_path / 'cell1.sqlite'}")
    cell_tables.metadata.create_all(engine)
    services.cell_dbs["cell-1"] = engine
    with services.api_db.begin() as conn:
        cell_id = conn.execute(
            sa.insert(api_tables.cell_mappings).values(uuid="cell-1")
        ).inserted_primary_key
        assert cell_id is not None
        group_id = conn.execute(sa.select(api_tables.instance_groups.c.id)).scalar_one()
        for inst, cell in ((LIVE, cell_id[0]), (GONE, cell_id[0]), (BUILDING, None)):
            conn.execute(
                sa.insert(api_tables.instance_mappings).values(
                    instance_uuid=inst, cell_id=cell, project_id="p1"
                )
            )
        for inst in (LIVE, GONE, BUILDING, UNMAPPED):
            conn.execute(
                sa.insert(api_tables.instance_group_member).values(
                    group_id=group_id, instance_uuid=inst
                )
            )
    with engine.begin() as conn:
        conn.execute(sa.insert(cell_tables.instances).values(uuid=LIVE, deleted=0))
        conn.execute(sa.insert(cell_tables.instances).values(uuid=GONE, deleted=1))
    shown = api.get(f"{SG}/{gid}", token=USER).json()["server_group"]
    assert sorted(shown["members"]) == sorted([BUILDING, LIVE])
    assert sorted(api.get(SG, token=USER).json()["server_groups"][0]["members"]) == sorted(
        [BUILDING, LIVE]
    )
    assert api.delete(f"{SG}/{gid}", token=USER).status_code == 204
    with services.api_db.connect() as conn:
        assert (
            conn.execute(
                sa.select(sa.func.count()).select_from(api_tables.instance_group_member)
            ).scalar()
            == 0
        )


def test_show_delete_errors_and_policies(api: ApiClient) -> None:
    missing = "00000000-0000-0000-0000-000000000001"
    _error(
        api.get(f"{SG}/{missing}", token=USER), 404, f"Instance group {missing} could not be found."
    )
    _error(
        api.delete(f"{SG}/{missing}", token=USER),
        404,
        f"Instance group {missing} could not be found.",
    )
    gid = _create(api, {"name": "g", "policies": ["affinity"]}).json()["server_group"]["id"]
    for resp, rule in (
        (api.delete(f"{SG}/{gid}", token=USER, headers={"X-Roles": "reader"}), "delete"),
        (api.post(SG, json={"server_group": {"name": "g", "policies": ["affinity"]}}, token=USER,
                  headers={"X-Roles": "reader"}), "create"),
    ):  # fmt: skip
        _error(
            resp,
            403,
            f"Policy doesn't allow os_compute_api:os-server-groups:{rule} to be performed.",
        )
    assert api.get(f"{SG}/{gid}", token="admin:admin").status_code == 200
    assert api.get(f"{SG}/{gid}", token=USER, headers={"X-Roles": "reader"}).status_code == 200
    assert api.delete(f"{SG}/{gid}", token="admin:admin").status_code == 204


def test_other_projects_group_is_not_found(api: ApiClient) -> None:
    gid = _create(api, {"name": "g", "policies": ["affinity"]}).json()["server_group"]["id"]
    message = f"Instance group {gid} could not be found."
    for roles in ("member,reader", "reader"):
        hdrs = {"X-Roles": roles}
        _error(api.get(f"{SG}/{gid}", token="eve:p2", headers=hdrs), 404, message)
        _error(api.delete(f"{SG}/{gid}", token="eve:p2", headers=hdrs), 404, message)
    assert api.get(f"{SG}/{gid}", token=USER).status_code == 200
    assert api.get(f"{SG}/{gid}", token="admin:admin").status_code == 200
