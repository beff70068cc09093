"""``/os-quota-class-sets`` against Nova's API samples, per microversion, and policies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.client import ApiClient

SAMPLES = Path("/work/shared/spec/nova-api-samples/os-quota-class-sets")


def sample(name: str) -> Any:
    return json.loads((SAMPLES / name).read_text())


@pytest.mark.parametrize(
    ("version", "folder"), [("2.1", "."), ("2.49", "."), ("2.50", "v2.50"), ("2.57", "v2.57")]
)
def test_show_and_update_match_samples(api: ApiClient, version: str, folder: str) -> None:
    resp = api.get("/v2.1/os-quota-class-sets/default", version=version)
    assert resp.status_code == 200
    assert resp.json() == sample(f"{folder}/quota-classes-show-get-resp.json")
    req = sample(f"{folder}/quota-classes-update-post-req.json")
    resp = api.put("/v2.1/os-quota-class-sets/test_class", req, version=version)
    assert resp.status_code == 200
    assert resp.json() == sample(f"{folder}/quota-classes-update-post-resp.json")


def test_default_class_changes_project_defaults(api: ApiClient) -> None:
    api.put("/v2.1/os-quota-class-sets/default", {"quota_class_set": {"instances": "7"}})
    assert api.get("/v2.1/os-quota-sets/p1").json()["quota_set"]["instances"] == 7
    assert api.get("/v2.1/os-quota-sets/p1/defaults").json()["quota_set"]["instances"] == 7
    body = api.get("/v2.1/os-quota-class-sets/other").json()["quota_class_set"]
    assert body["instances"] == 10 and body["id"] == "other"


def test_update_validation_per_version(api: ApiClient) -> None:
    body = {"quota_class_set": {"floating_ips": 1}}
    assert api.put("/v2.1/os-quota-class-sets/c", body, version="2.49").status_code == 200
    resp = api.put("/v2.1/os-quota-class-sets/c", body, version="2.50")
    assert resp.status_code == 400
    assert resp.json()["badRequest"]["message"] == (
        "Invalid input for field/attribute quota_class_set. Value: {'floating_ips': 1}. "
        "Additional properties are not allowed ('floating_ips' was unexpected)"
    )
    resp = api.put("/v2.1/os-quota-class-sets/c", {"quota_class_set": {"cores": -5}})
    assert resp.json()["badRequest"]["message"] == (
        "Invalid input for field/attribute cores. Value: -5. -5 is less than the minimum of -1"
    )
    # server_groups are accepted before 2.50 even though they are not shown.
    groups = {"quota_class_set": {"server_groups": 3}}
    assert api.put("/v2.1/os-quota-class-sets/c", groups, version="2.1").status_code == 200
    shown = api.get("/v2.1/os-quota-class-sets/c", version="2.50").json()["quota_class_set"]
    assert shown["server_groups"] == 3


def test_class_name_too_long(api: ApiClient) -> None:
    name = "x" * 256
    resp = api.put(f"/v2.1/os-quota-class-sets/{name}", {"quota_class_set": {"cores": 1}})
    assert resp.status_code == 400
    assert resp.json() == {
        "badRequest": {
            "code": 400,
            "message": "quota_class_name has 256 characters, more than 255.",
        }
    }


def test_strict_query_from_2102(api: ApiClient) -> None:
    assert api.get("/v2.1/os-quota-class-sets/default?x=1", version="2.101").status_code == 200
    assert api.get("/v2.1/os-quota-class-sets/default?x=1", version="2.102").status_code == 400


def test_admin_only(api: ApiClient) -> None:
    resp = api.get("/v2.1/os-quota-class-sets/default", token="u1:p1")
    assert resp.status_code == 403
    assert resp.json()["forbidden"]["message"] == (
        "Policy doesn't allow os_compute_api:os-quota-class-sets:show to be performed."
    )
    resp = api.put("/v2.1/os-quota-class-sets/default", {"quota_class_set": {}}, token="u1:p1")
    assert resp.status_code == 403
