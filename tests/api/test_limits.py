"""``GET /limits`` against Nova's API samples, usage counting and the other-project policy."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from openkeel.api.factory import build_api_app
from openkeel.api.services import ApiServices
from openkeel.db.schema import api as tables
from tests.client import ApiClient
from tests.conftest import make_services

SAMPLES = Path("/work/shared/spec/nova-api-samples/limits")


def sample(folder: str) -> Any:
    return json.loads((SAMPLES / folder / "limit-get-resp.json").read_text())


@pytest.mark.parametrize(
    ("version", "folder"),
    [("2.1", "."), ("2.35", "."), ("2.36", "v2.36"), ("2.38", "v2.36"), ("2.39", "v2.39"),
     ("2.56", "v2.39"), ("2.57", "v2.57"), ("2.104", "v2.57")],
)  # fmt: skip
def test_matches_samples(api: ApiClient, version: str, folder: str) -> None:
    resp = api.get("/v2.1/limits", version=version, token="u1:p1")
    assert resp.status_code == 200
    assert resp.json() == sample(folder)


def test_limits_and_usage_follow_quotas(api: ApiClient, services: ApiServices) -> None:
    api.put("/v2.1/os-quota-sets/p1", {"quota_set": {"server_groups": 4, "instances": 3}})
    with services.api_db.begin() as conn:
        conn.execute(
            sa.insert(tables.instance_groups).values(uuid="g1", project_id="p1", user_id="u1")
        )
    absolute = api.get("/v2.1/limits", token="u1:p1").json()["limits"]["absolute"]
    assert absolute["maxServerGroups"] == 4 and absolute["totalServerGroupsUsed"] == 1
    assert absolute["maxTotalInstances"] == 3 and absolute["totalInstancesUsed"] == 0


def test_other_project_needs_admin(api: ApiClient) -> None:
    api.put("/v2.1/os-quota-sets/p2", {"quota_set": {"cores": 3}})
    resp = api.get("/v2.1/limits?tenant_id=p2", token="u1:p1")
    assert resp.status_code == 403
    assert resp.json() == {
        "forbidden": {
            "code": 403,
            "message": "Policy doesn't allow os_compute_api:limits:other_project to be performed.",
        }
    }
    resp = api.get("/v2.1/limits?tenant_id=p2", token="admin:p1")
    assert resp.json()["limits"]["absolute"]["maxTotalCores"] == 3


def test_strict_query_from_275(api: ApiClient) -> None:
    assert api.get("/v2.1/limits?x=1", version="2.74").status_code == 200
    resp = api.get("/v2.1/limits?x=1", version="2.75")
    assert resp.status_code == 400
    assert resp.json()["badRequest"]["message"] == (
        "Additional properties are not allowed ('x' was unexpected)"
    )


def test_noop_driver_reports_unlimited(tmp_path: Path) -> None:
    services = make_services(tmp_path, **{"quota.driver": "nova.quota.NoopQuotaDriver"})
    client = ApiClient(build_api_app(services))
    try:
        absolute = client.get("/v2.1/limits", version="2.57").json()["limits"]["absolute"]
    finally:
        client.close()
    assert absolute == dict.fromkeys(sample("v2.57")["limits"]["absolute"], -1)
