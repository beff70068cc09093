"""``/os-quota-sets`` against Nova's API samples, validation messages and policies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from openkeel.api.services import ApiServices
from openkeel.api.usecases.quotas import QuotaEngine
from tests.client import ApiClient
from tests.conftest import make_services

SAMPLES = Path("/work/shared/spec/nova-api-samples")


def sample(name: str, project: str = "p1") -> Any:
    text = (SAMPLES / name).read_text().replace("fake_tenant", project)
    return json.loads(text)


@pytest.mark.parametrize(
    ("version", "folder"), [("2.1", "os-quota-sets"), ("2.36", "os-quota-sets/v2.36"),
                            ("2.57", "os-quota-sets/v2.57"), ("2.104", "os-quota-sets/v2.57")]
)  # fmt: skip
def test_show_defaults_and_detail_match_samples(api: ApiClient, version: str, folder: str) -> None:
    for path, name in (
        ("", "quotas-show-get-resp.json"),
        ("/defaults", "quotas-show-defaults-get-resp.json"),
        ("/detail", "quotas-show-detail-get-resp.json"),
    ):
        resp = api.get(f"/v2.1/os-quota-sets/p1{path}", version=version, token="u1:p1")
        assert resp.status_code == 200, (path, resp.text)
        assert resp.json() == sample(f"{folder}/{name}"), path


def test_update_then_show_and_user_quota(api: ApiClient) -> None:
    resp = api.put("/v2.1/os-quota-sets/p1", {"quota_set": {"instances": 45, "cores": "30"}})
    assert resp.status_code == 200
    body = resp.json()["quota_set"]
    assert "id" not in body and body["instances"] == 45 and body["cores"] == 30
    resp = api.put(
        "/v2.1/os-quota-sets/p1?user_id=u1", {"quota_set": {"instances": 9, "force": True}}
    )
    assert resp.status_code == 200 and resp.json()["quota_set"]["instances"] == 9
    show = api.get("/v2.1/os-quota-sets/p1?user_id=u1", token="u1:p1").json()["quota_set"]
    assert show["instances"] == 9 and show["cores"] == 30 and show["id"] == "p1"
    assert api.get("/v2.1/os-quota-sets/p1").json()["quota_set"]["instances"] == 45


def test_user_quota_above_project_remains_is_400(api: ApiClient) -> None:
    api.put("/v2.1/os-quota-sets/p1", {"quota_set": {"instances": 20}})
    api.put("/v2.1/os-quota-sets/p1?user_id=u1", {"quota_set": {"instances": 15}})
    resp = api.put("/v2.1/os-quota-sets/p1?user_id=u2", {"quota_set": {"instances": 6}})
    assert resp.status_code == 400
    assert resp.json() == {
        "badRequest": {
            "code": 400,
            "message": "Quota limit 6 for instances must be less than or equal to 5.",
        }
    }
    resp = api.put("/v2.1/os-quota-sets/p1", {"quota_set": {"instances": 10}})
    assert resp.json()["badRequest"]["message"] == (
        "Quota limit 10 for instances must be greater than or equal to already used and "
        "reserved 15."
    )
    forced = {"quota_set": {"instances": 6, "force": "yes"}}
    assert api.put("/v2.1/os-quota-sets/p1?user_id=u2", forced).status_code == 200
    # Users now hold more than the project limit: Nova then sees no minimum at all.
    assert api.put("/v2.1/os-quota-sets/p1", {"quota_set": {"instances": 10}}).status_code == 200


def test_limit_below_usage_is_400_unless_forced(api: ApiClient, services: ApiServices) -> None:
    import sqlalchemy as sa

    from openkeel.db.schema import api as tables

    with services.api_db.begin() as conn:
        for i in range(3):
            conn.execute(
                sa.insert(tables.instance_groups).values(uuid=f"g{i}", project_id="p1", user_id="u")
            )
    resp = api.put("/v2.1/os-quota-sets/p1", {"quota_set": {"server_groups": 2}})
    assert resp.status_code == 400
    assert resp.json()["badRequest"]["message"] == (
        "Quota limit 2 for server_groups must be greater than or equal to already used and "
        "reserved 3."
    )
    forced = {"quota_set": {"server_groups": 2, "force": True}}
    assert api.put("/v2.1/os-quota-sets/p1", forced).json()["quota_set"]["server_groups"] == 2
    detail = api.get("/v2.1/os-quota-sets/p1/detail").json()["quota_set"]
    assert detail["server_groups"] == {"in_use": 3, "limit": 2, "reserved": 0}


@pytest.mark.parametrize(
    ("version", "body", "message"),
    [
        ("2.1", {"quota_set": {"instances": -2}},
         "Invalid input for field/attribute instances. Value: -2. -2 is less than the minimum of -1"),
        ("2.1", {"quota_set": {"instances": "abc"}},
         "Invalid input for field/attribute instances. Value: abc. 'abc' does not match '^-?[0-9]+$'"),
        ("2.1", {"quota_set": {"force": "maybe"}},
         "Invalid input for field/attribute force. Value: maybe. 'maybe' is not one of "
         "[True, 'True', 'TRUE', 'true', '1', 'ON', 'On', 'on', 'YES', 'Yes', 'yes', False, "
         "'False', 'FALSE', 'false', '0', 'OFF', 'Off', 'off', 'NO', 'No', 'no']"),
        ("2.36", {"quota_set": {"floating_ips": 1}},
         "Invalid input for field/attribute quota_set. Value: {'floating_ips': 1}. "
         "Additional properties are not allowed ('floating_ips' was unexpected)"),
        ("2.57", {"quota_set": {"injected_files": 1}},
         "Invalid input for field/attribute quota_set. Value: {'injected_files': 1}. "
         "Additional properties are not allowed ('injected_files' was unexpected)"),
        ("2.1", {"quota_set": {"instances": 2147483648}},
         "Invalid input for field/attribute instances. Value: 2147483648. 2147483648 is "
         "greater than the maximum of 2147483647"),
    ],
)  # fmt: skip
def test_update_validation(api: ApiClient, version: str, body: Any, message: str) -> None:
    resp = api.put("/v2.1/os-quota-sets/p1", body, version=version)
    assert resp.status_code == 400
    assert resp.json()["badRequest"]["message"] == message


def test_old_versions_accept_network_quotas(api: ApiClient) -> None:
    resp = api.put("/v2.1/os-quota-sets/p1", {"quota_set": {"floating_ips": 3}}, version="2.35")
    assert resp.status_code == 200 and resp.json()["quota_set"]["floating_ips"] == 3


def test_delete_reverts_to_defaults(api: ApiClient) -> None:
    api.put("/v2.1/os-quota-sets/p1", {"quota_set": {"instances": 45}})
    api.put("/v2.1/os-quota-sets/p1?user_id=u1", {"quota_set": {"cores": 5}})
    resp = api.delete("/v2.1/os-quota-sets/p1?user_id=u1")
    assert resp.status_code == 202 and resp.content == b""
    assert api.get("/v2.1/os-quota-sets/p1?user_id=u1").json()["quota_set"]["cores"] == 20
    assert api.delete("/v2.1/os-quota-sets/p1").status_code == 202
    assert api.get("/v2.1/os-quota-sets/p1").json()["quota_set"]["instances"] == 10


def test_strict_query_from_275(api: ApiClient) -> None:
    assert api.get("/v2.1/os-quota-sets/p1?foo=1", version="2.74").status_code == 200
    resp = api.get("/v2.1/os-quota-sets/p1?foo=1", version="2.75")
    assert resp.status_code == 400
    assert resp.json()["badRequest"]["message"] == (
        "Additional properties are not allowed ('foo' was unexpected)"
    )


def test_policies(api: ApiClient) -> None:
    denied = "Policy doesn't allow os_compute_api:os-quota-sets:%s to be performed."
    resp = api.get("/v2.1/os-quota-sets/p2", token="u1:p1")
    assert resp.status_code == 403
    assert resp.json()["forbidden"]["message"] == denied % "show"
    assert api.get("/v2.1/os-quota-sets/p2", token="admin:p1").status_code == 200
    reader = {"X-Roles": "reader"}
    assert (
        api.get("/v2.1/os-quota-sets/p1/detail", token="u1:p1", headers=reader).status_code == 200
    )
    assert api.get("/v2.1/os-quota-sets/p2/defaults", token="u1:p1").status_code == 200
    resp = api.put("/v2.1/os-quota-sets/p1", {"quota_set": {"cores": 1}}, token="u1:p1")
    assert resp.json()["forbidden"]["message"] == denied % "update"
    resp = api.delete("/v2.1/os-quota-sets/p1", token="u1:p1")
    assert resp.json()["forbidden"]["message"] == denied % "delete"


def test_noop_driver_matches_samples(tmp_path: Path) -> None:
    from openkeel.api.factory import build_api_app

    services = make_services(tmp_path, **{"quota.driver": "nova.quota.NoopQuotaDriver"})
    client = ApiClient(build_api_app(services))
    try:
        for path, name in (
            ("", "quotas-show-get-resp.json"),
            ("/defaults", "quotas-show-defaults-get-resp.json"),
            ("/detail", "quotas-show-detail-get-resp.json"),
        ):
            resp = client.get(f"/v2.1/os-quota-sets/p1{path}")
            assert resp.json() == sample(f"os-quota-sets-noop/{name}"), path
        req = sample("os-quota-sets-noop/quotas-update-post-req.json")
        resp = client.put("/v2.1/os-quota-sets/p1", req)
        assert resp.json() == sample("os-quota-sets-noop/quotas-update-post-resp.json")
    finally:
        client.close()
    assert QuotaEngine(services).limits("p1")["instances"] == -1
