"""/servers/{server_id}/metadata: index, create (merge), update_all (replace), show, update
and delete one key; quota ``metadata_items``, lock and vm_state 409s, Nova's messages."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from openkeel.api.services import ApiServices
from openkeel.db.repositories import build_requests, instance_mappings, instances
from openkeel.domain.instances import FlavorSnapshot, Instance, InstanceUpdate
from tests.client import ApiClient
from tests.conformance.sample_catalog import load
from tests.conformance.test_samples import shape_diff
from tests.conftest import CELL1_UUID

SERVER = "5f0c9d1e-2b3a-4c4d-8e5f-6a7b8c9d0e1f"
BASE = f"/v2.1/servers/{SERVER}/metadata"
USER = "demo:demo"
ADMIN = "admin:admin"
FLAVOR = FlavorSnapshot(flavorid="1", name="tiny", memory_mb=512, vcpus=1, root_gb=1)


def _instance(**fields: Any) -> Instance:
    values: dict[str, Any] = {
        "uuid": SERVER, "project_id": "demo", "user_id": "demo", "flavor": FLAVOR,
        "vm_state": "active", "launched_at": datetime(2024, 1, 1), "metadata": {"a": "1"},
    }  # fmt: skip
    values.update(fields)
    return Instance(**values)


def seed(services: ApiServices, **fields: Any) -> None:
    """An ACTIVE server of project demo in cell1 (``fields`` override)."""
    inst = _instance(**fields)
    with services.api_db.begin() as api:
        instance_mappings.create(api, SERVER, inst.project_id, "demo", cell_uuid=CELL1_UUID)
    with services.cell_dbs[CELL1_UUID].begin() as conn:
        instances.create(conn, inst)


def _update(services: ApiServices, **changes: Any) -> None:
    with services.cell_dbs[CELL1_UUID].begin() as conn:
        instances.update(conn, SERVER, InstanceUpdate(**changes))


def _message(resp: Any) -> str:
    return str(next(iter(resp.json().values()))["message"])


@pytest.fixture
def server(services: ApiServices) -> ApiServices:
    seed(services)
    return services


def test_index_and_show(api: ApiClient, server: Any) -> None:
    assert api.get(BASE, token=USER).json() == {"metadata": {"a": "1"}}
    assert api.get(f"{BASE}/a", token=USER).json() == {"meta": {"a": "1"}}
    resp = api.get(f"{BASE}/zz", token=USER)
    assert resp.status_code == 404
    assert _message(resp) == "Metadata item was not found"


def test_create_merges_and_update_all_replaces(api: ApiClient, server: Any) -> None:
    resp = api.post(BASE, json={"metadata": {"b": "2", "a": "x"}}, token=USER)
    assert resp.status_code == 200
    assert resp.json() == {"metadata": {"a": "x", "b": "2"}}
    resp = api.put(BASE, json={"metadata": {"c": "3"}}, token=USER)
    assert resp.status_code == 200
    assert resp.json() == {"metadata": {"c": "3"}}
    assert api.get(BASE, token=USER).json() == {"metadata": {"c": "3"}}
    assert api.put(BASE, json={"metadata": {}}, token=USER).json() == {"metadata": {}}


def test_update_one_key(api: ApiClient, server: Any) -> None:
    resp = api.put(f"{BASE}/k", json={"meta": {"k": "v"}}, token=USER)
    assert resp.status_code == 200
    assert resp.json() == {"meta": {"k": "v"}}
    assert api.get(BASE, token=USER).json() == {"metadata": {"a": "1", "k": "v"}}
    resp = api.put(f"{BASE}/k", json={"meta": {"other": "v"}}, token=USER)
    assert resp.status_code == 400
    assert _message(resp) == "Request body and URI mismatch"
    resp = api.put(f"{BASE}/k", json={"meta": {"k": "v", "j": "w"}}, token=USER)
    assert resp.status_code == 400


def test_delete_one_key(api: ApiClient, server: Any) -> None:
    resp = api.delete(f"{BASE}/a", token=USER)
    assert resp.status_code == 204
    assert resp.content == b""
    assert api.get(BASE, token=USER).json() == {"metadata": {}}
    resp = api.delete(f"{BASE}/a", token=USER)
    assert resp.status_code == 404
    assert _message(resp) == "Metadata item was not found"


@pytest.mark.parametrize(
    "body",
    [{"metadata": {"": "x"}}, {"metadata": {"a": 1}}, {"metadata": {"a" * 256: "x"}},
     {"metadata": {"a": "x" * 256}}, {"meta": {"a": "1"}}, {}],
)  # fmt: skip
def test_create_schema_errors(api: ApiClient, server: Any, body: Any) -> None:
    assert api.post(BASE, json=body, token=USER).status_code == 400


def test_quota_metadata_items(api: ApiClient, services: ApiServices) -> None:
    services.conf.set_override("metadata_items", 2, group="quota")
    seed(services)
    resp = api.post(BASE, json={"metadata": {"b": "2", "c": "3"}}, token=USER)
    assert resp.status_code == 403
    assert _message(resp) == "Maximum number of metadata items exceeds 2"
    assert api.put(BASE, json={"metadata": {"b": "2", "c": "3"}}, token=USER).status_code == 200
    resp = api.put(f"{BASE}/d", json={"meta": {"d": "4"}}, token=USER)
    assert resp.status_code == 403
    assert api.put(f"{BASE}/b", json={"meta": {"b": "5"}}, token=USER).status_code == 200


def test_locked_server_is_409_for_owner_not_admin(api: ApiClient, server: ApiServices) -> None:
    _update(server, locked=True, locked_by="admin")
    for method, path, body in (
        ("POST", BASE, {"metadata": {"b": "2"}}),
        ("PUT", BASE, {"metadata": {"b": "2"}}),
        ("PUT", f"{BASE}/b", {"meta": {"b": "2"}}),
        ("DELETE", f"{BASE}/a", None),
    ):
        resp = api.request(method, path, json=body, token=USER)
        assert resp.status_code == 409, (method, path)
        assert _message(resp) == f"Instance {SERVER} is locked"
    assert api.post(BASE, json={"metadata": {"b": "2"}}, token=ADMIN).status_code == 200
    assert api.get(BASE, token=USER).status_code == 200


@pytest.mark.parametrize(
    ("changes", "message"),
    [({"vm_state": "error"}, "update metadata' instance {id} while it is in vm_state error"),
     ({"vm_state": "building"}, "update metadata' instance {id} while it is in vm_state building"),
     ({"vm_state": "resized"}, "update metadata' instance {id} while it is in vm_state resized")],
)  # fmt: skip
def test_invalid_vm_state_is_409(
    api: ApiClient, server: ApiServices, changes: dict[str, Any], message: str
) -> None:
    _update(server, **changes)
    resp = api.post(BASE, json={"metadata": {"b": "2"}}, token=USER)
    assert resp.status_code == 409
    assert _message(resp) == "Cannot '" + message.format(id=SERVER)
    resp = api.delete(f"{BASE}/a", token=USER)
    assert resp.status_code == 409
    assert _message(resp) == "Cannot '" + message.format(id=SERVER).replace("update", "delete")


def test_task_state_does_not_block_metadata(api: ApiClient, server: ApiServices) -> None:
    # Nova's metadata gate checks vm_state only (task_state=None there means "any").
    _update(server, task_state="rebooting")
    assert api.post(BASE, json={"metadata": {"b": "2"}}, token=USER).status_code == 200


def test_never_launched_server_is_409(api: ApiClient, services: ApiServices) -> None:
    seed(services, launched_at=None, vm_state="stopped")
    resp = api.post(BASE, json={"metadata": {"b": "2"}}, token=USER)
    assert resp.status_code == 409
    assert _message(resp) == f"Instance {SERVER} is in an invalid state for 'update metadata'"


def test_other_project_is_404_and_policy_403(api: ApiClient, services: ApiServices) -> None:
    seed(services, project_id="other")
    resp = api.get(BASE, token=USER)
    assert resp.status_code == 404
    assert _message(resp) == f"Instance {SERVER} could not be found."
    assert api.get(BASE, token=ADMIN).json() == {"metadata": {"a": "1"}}
    resp = api.get(BASE, token="demo:other", headers={"X-Roles": "nobody"})
    assert resp.status_code == 403
    assert _message(resp) == (
        "Policy doesn't allow os_compute_api:server-metadata:index to be performed."
    )
    resp = api.post(BASE, json={"metadata": {}}, token="demo:other", headers={"X-Roles": "reader"})
    assert resp.status_code == 403


def test_server_still_building_is_read_from_build_request(
    api: ApiClient, services: ApiServices
) -> None:
    inst = _instance(vm_state="building", launched_at=None)
    with services.api_db.begin() as conn:
        instance_mappings.create(conn, SERVER, "demo", "demo")
        build_requests.create(conn, inst)
    assert api.get(BASE, token=USER).json() == {"metadata": {"a": "1"}}
    resp = api.put(BASE, json={"metadata": {"b": "2"}}, token=USER)
    assert resp.status_code == 409
    assert _message(resp) == (
        f"Cannot 'update metadata' instance {SERVER} while it is in vm_state building"
    )


def test_deleted_server_is_404(api: ApiClient, server: ApiServices) -> None:
    with server.cell_dbs[CELL1_UUID].begin() as conn:
        instances.soft_delete(conn, SERVER)
    assert api.get(BASE, token=USER).status_code == 404
    assert api.post(BASE, json={"metadata": {}}, token=USER).status_code == 404


def test_query_strict_from_2102(api: ApiClient, server: Any) -> None:
    assert api.get(f"{BASE}?x=1", version="2.101", token=USER).status_code == 200
    assert api.get(f"{BASE}?x=1", version="2.102", token=USER).status_code == 400
    assert api.get(f"{BASE}/a?x=1", version="2.102", token=USER).status_code == 400


@pytest.mark.parametrize(
    ("method", "path", "req", "resp"),
    [("GET", BASE, None, "server-metadata-all-resp.json"),
     ("POST", BASE, "server-metadata-all-req.json", "server-metadata-all-resp.json"),
     ("PUT", BASE, "server-metadata-all-req.json", "server-metadata-all-resp.json"),
     ("GET", f"{BASE}/foo", None, "server-metadata-resp.json"),
     ("PUT", f"{BASE}/foo", "server-metadata-req.json", "server-metadata-resp.json")],
)  # fmt: skip
def test_nova_sample_shapes(
    api: ApiClient, services: ApiServices, method: str, path: str, req: str | None, resp: str
) -> None:
    seed(services, metadata={"foo": "Foo Value"})
    body = load(f"server-metadata/{req}") if req else None
    answer = api.request(method, path, json=body, token=USER)
    assert answer.status_code == 200, answer.text
    assert shape_diff(answer.json(), load(f"server-metadata/{resp}")) == []
