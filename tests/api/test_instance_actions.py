"""os-instance-actions: list (2.21 deleted servers, 2.58 paging and changes-since, 2.66
changes-before, strict queries) and show with events per policy and microversion."""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Any

import pytest

from openkeel.api.services import ApiServices
from openkeel.db.repositories import instance_actions, instance_mappings, instances
from openkeel.domain.instances import FlavorSnapshot, Instance
from tests.client import ApiClient
from tests.conformance.sample_catalog import SAMPLES, load
from tests.conformance.test_samples import shape_diff
from tests.conftest import CELL1_UUID

SERVER = "7b2e61c4-5a3f-4f5e-9d8e-0a1b2c3d4e5f"
BASE = f"/v2.1/servers/{SERVER}/os-instance-actions"
USER = "demo:demo"
T0 = datetime(2024, 1, 1, 10, 0, 0, 123456)


def _at(minute: int) -> datetime:
    return T0.replace(minute=minute)


def _seed_server(services: ApiServices, project: str = "demo") -> None:
    flavor = FlavorSnapshot(flavorid="1", name="tiny", memory_mb=512, vcpus=1, root_gb=1)
    inst = Instance(uuid=SERVER, project_id=project, user_id="demo", flavor=flavor,
                    vm_state="active", launched_at=T0)  # fmt: skip
    with services.api_db.begin() as api:
        instance_mappings.create(api, SERVER, project, "demo", cell_uuid=CELL1_UUID)
    with services.cell_dbs[CELL1_UUID].begin() as conn:
        instances.create(conn, inst)


def _action(services: ApiServices, name: str, request_id: str, minute: int) -> None:
    with services.cell_dbs[CELL1_UUID].begin() as conn:
        instance_actions.start_action(
            conn, SERVER, name, request_id=request_id, user_id="demo", project_id="demo",
            now=_at(minute),
        )  # fmt: skip
        event = f"compute_{name}_instance"
        instance_actions.start_event(conn, SERVER, request_id, event, host="host1", now=_at(minute))
        instance_actions.finish_event(
            conn, SERVER, request_id, event, result="Error", traceback="Traceback: boom",
            details="boom", now=_at(minute + 1),
        )  # fmt: skip


@pytest.fixture
def seeded(services: ApiServices) -> ApiServices:
    _seed_server(services)
    _action(services, "create", "req-1", 1)
    _action(services, "stop", "req-2", 3)
    _action(services, "start", "req-3", 5)
    return services


def _get(api: ApiClient, path: str, version: str, token: str = USER, **kw: Any) -> Any:
    return api.get(path, version=version, token=token, **kw)


def test_list_before_258_shows_all_actions_newest_first(api: ApiClient, seeded: Any) -> None:
    resp = _get(api, BASE + "?limit=1&whatever=1", "2.57")
    assert resp.status_code == 200
    body = resp.json()
    assert list(body) == ["instanceActions"]
    assert [a["request_id"] for a in body["instanceActions"]] == ["req-3", "req-2", "req-1"]
    assert body["instanceActions"][2] == {
        "action": "create",
        "instance_uuid": SERVER,
        "request_id": "req-1",
        "user_id": "demo",
        "project_id": "demo",
        "start_time": "2024-01-01T10:01:00.123456",
        "message": "Error",
    }


def test_list_258_pages_with_limit_marker_and_links(api: ApiClient, seeded: Any) -> None:
    body = _get(api, BASE + "?limit=2", "2.58").json()
    assert [a["request_id"] for a in body["instanceActions"]] == ["req-3", "req-2"]
    assert body["instanceActions"][0]["updated_at"] == "2024-01-01T10:06:00.123456"
    assert body["links"] == [
        {
            "rel": "next",
            "href": f"http://openkeel.test{BASE}?limit=2&marker=req-2",
        }
    ]
    body = _get(api, BASE + "?limit=2&marker=req-2", "2.58").json()
    assert [a["request_id"] for a in body["instanceActions"]] == ["req-1"]
    assert "links" not in body
    assert _get(api, BASE + "?limit=0", "2.58").json() == {"instanceActions": []}


def test_list_258_unknown_marker_is_nova_message(api: ApiClient, seeded: Any) -> None:
    resp = _get(api, BASE + "?marker=req-nope", "2.58")
    assert resp.status_code == 400
    assert resp.json()["badRequest"]["message"] == "Marker None could not be found."


def test_list_changes_since_and_before(api: ApiClient, seeded: Any) -> None:
    since = "2024-01-01T10:04:00Z"
    body = _get(api, BASE + f"?changes-since={since}", "2.58").json()
    assert [a["request_id"] for a in body["instanceActions"]] == ["req-3", "req-2"]
    before = "2024-01-01T10:03:00"
    body = _get(api, BASE + f"?changes-before={before}", "2.66").json()
    assert [a["request_id"] for a in body["instanceActions"]] == ["req-1"]
    resp = _get(api, BASE + f"?changes-since={since}&changes-before={before}", "2.66")
    assert resp.status_code == 400
    assert resp.json()["badRequest"]["message"] == (
        "The value of changes-since must be less than or equal to changes-before."
    )


@pytest.mark.parametrize(
    ("query", "version"),
    [("?changes-before=2024-01-01T10:05:00", "2.65"), ("?foo=1", "2.58"), ("?limit=-1", "2.58"),
     ("?changes-since=yesterday", "2.58"), ("?limit=1&limit=2", "2.58")],
)  # fmt: skip
def test_list_258_queries_are_strict(api: ApiClient, seeded: Any, query: str, version: str) -> None:
    resp = _get(api, BASE + query, version)
    assert resp.status_code == 400
    message = resp.json()["badRequest"]["message"]
    unexpected = query[1:].split("=")[0]
    assert message.startswith("Invalid input for query parameters") or message == (
        f"Additional properties are not allowed ('{unexpected}' was unexpected)"
    )


def test_list_of_unknown_or_foreign_server_is_404(api: ApiClient, services: ApiServices) -> None:
    _seed_server(services, project="other")
    for token in (USER, None):
        resp = _get(api, f"/v2.1/servers/{SERVER}/os-instance-actions", "2.1", token=token or USER)
        assert resp.status_code == 404
        assert resp.json()["itemNotFound"]["message"] == f"Instance {SERVER} could not be found."
    missing = "/v2.1/servers/00000000-0000-4000-8000-000000000000/os-instance-actions"
    assert _get(api, missing, "2.1").status_code == 404
    # The admin sees the other project's server.
    assert _get(api, BASE, "2.1", token="admin:admin").json() == {"instanceActions": []}


def test_deleted_server_visible_from_221(api: ApiClient, seeded: ApiServices) -> None:
    with seeded.cell_dbs[CELL1_UUID].begin() as conn:
        instances.soft_delete(conn, SERVER)
    assert _get(api, BASE, "2.20").status_code == 404
    assert len(_get(api, BASE, "2.21").json()["instanceActions"]) == 3
    assert _get(api, f"{BASE}/req-1", "2.21").status_code == 200
    assert _get(api, f"{BASE}/req-1", "2.20").status_code == 404


def test_show_unknown_action_is_404(api: ApiClient, seeded: Any) -> None:
    resp = _get(api, f"{BASE}/req-nope", "2.1")
    assert resp.status_code == 404
    assert resp.json()["itemNotFound"]["message"] == "Action req-nope not found"


def _event(body: Any) -> dict[str, Any]:
    events: list[dict[str, Any]] = body["instanceAction"]["events"]
    assert len(events) == 1
    return events[0]


BASIC_EVENT = {
    "event": "compute_stop_instance",
    "start_time": "2024-01-01T10:03:00.123456",
    "finish_time": "2024-01-01T10:04:00.123456",
    "result": "Error",
}
HOST_ID = hashlib.sha224(b"demohost1").hexdigest()


def test_show_events_per_microversion_and_role(api: ApiClient, seeded: Any) -> None:
    path = f"{BASE}/req-2"
    admin = "admin:admin"
    body = _get(api, path, "2.1").json()
    assert "events" not in body["instanceAction"]
    assert "updated_at" not in body["instanceAction"]
    assert _event(_get(api, path, "2.1", token=admin).json()) == {
        **BASIC_EVENT, "traceback": "Traceback: boom"
    }  # fmt: skip
    assert _event(_get(api, path, "2.51").json()) == BASIC_EVENT
    assert _event(_get(api, path, "2.62").json()) == {**BASIC_EVENT, "hostId": HOST_ID}
    assert _event(_get(api, path, "2.62", token=admin).json()) == {
        **BASIC_EVENT, "traceback": "Traceback: boom", "host": "host1", "hostId": HOST_ID
    }  # fmt: skip
    assert _event(_get(api, path, "2.84", token=admin).json()) == {
        **BASIC_EVENT, "traceback": "Traceback: boom", "host": "host1", "hostId": HOST_ID,
        "details": "boom",
    }  # fmt: skip
    assert _event(_get(api, path, "2.84").json()) == {**BASIC_EVENT, "hostId": HOST_ID}
    action = _get(api, path, "2.58").json()["instanceAction"]
    assert action["updated_at"] == "2024-01-01T10:04:00.123456"
    assert action["request_id"] == "req-2"
    assert action["action"] == "stop"


def test_show_query_strict_from_2102(api: ApiClient, seeded: Any) -> None:
    assert _get(api, f"{BASE}/req-2?x=1", "2.101").status_code == 200
    assert _get(api, f"{BASE}/req-2?x=1", "2.102").status_code == 400


def test_policy_denies_non_reader(api: ApiClient, seeded: Any) -> None:
    resp = _get(api, BASE, "2.1", headers={"X-Roles": "other"})
    assert resp.status_code == 403
    assert resp.json()["forbidden"]["message"] == (
        "Policy doesn't allow os_compute_api:os-instance-actions:list to be performed."
    )


def _seed_samples_state(services: ApiServices) -> None:
    """A created then stopped server whose events succeeded (what Nova's samples show)."""
    _seed_server(services)
    with services.cell_dbs[CELL1_UUID].begin() as conn:
        for minute, (name, request_id) in enumerate((("create", "req-1"), ("stop", "req-2"))):
            instance_actions.start_action(
                conn, SERVER, name, request_id=request_id, user_id="demo", project_id="demo",
                now=_at(minute),
            )  # fmt: skip
            event = f"compute_{name}_instance"
            instance_actions.start_event(conn, SERVER, request_id, event, host="compute",
                                         now=_at(minute))  # fmt: skip
            instance_actions.finish_event(conn, SERVER, request_id, event, result="Success",
                                          now=_at(minute))  # fmt: skip


_SAMPLE_DIR = "os-instance-actions"
_SAMPLE_CASES = [
    (folder, sample, query)
    for folder in ("", "v2.21", "v2.51", "v2.58", "v2.62", "v2.66", "v2.84")
    for sample, query in (
        ("instance-actions-list-resp.json", ""),
        ("instance-action-get-resp.json", "/req-2"),
        ("instance-action-get-non-admin-resp.json", "/req-2"),
        ("instance-actions-list-with-limit-resp.json", "?limit=1"),
        ("instance-actions-list-with-marker-resp.json", "?marker=req-2"),
        ("instance-actions-list-with-changes-since.json", "?changes-since=2024-01-01T10:01:00"),
        ("instance-actions-list-with-changes-before.json", "?changes-before=2024-01-01T10:00:30"),
    )
    # Only the samples Nova has (not every file exists in every microversion folder).
    if (SAMPLES / _SAMPLE_DIR / folder / sample).exists()
]


@pytest.mark.parametrize(("folder", "sample", "query"), _SAMPLE_CASES)
def test_nova_sample_shapes(
    api: ApiClient, services: ApiServices, folder: str, sample: str, query: str
) -> None:
    name = f"{_SAMPLE_DIR}/{folder}/{sample}".replace("//", "/")
    _seed_samples_state(services)
    token = USER if "non-admin" in sample else "admin:admin"
    version = folder[1:] if folder else "2.1"
    resp = _get(api, BASE + query, version, token=token)
    assert resp.status_code == 200, resp.text
    assert shape_diff(resp.json(), load(name)) == []
