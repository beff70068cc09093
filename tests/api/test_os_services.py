"""``/os-services`` over a migrated cell DB: listing, per-microversion fields and updates,
delete rules, policies and Nova's exact messages."""

from __future__ import annotations

import datetime
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from openkeel.api.factory import build_api_app
from openkeel.api.services import ApiServices
from openkeel.db import migrate
from openkeel.db.engine import make_engine
from openkeel.db.repositories import compute_nodes as nodes_repo
from openkeel.db.repositories import services as repo
from openkeel.db.schema import api as api_tables
from openkeel.db.schema import cell as cell_tables
from tests.client import ApiClient
from tests.conftest import make_services


def now() -> datetime.datetime:
    """Naive UTC now, taken when needed: a module-level timestamp goes stale (down) once the
    suite has run longer than service_down_time."""
    return datetime.datetime.now(datetime.UTC).replace(tzinfo=None)


CELL1 = "3a1d9b5c-2b8e-4e0c-9a57-1c1f4b2f0a11"


@dataclass
class Cloud:
    """An API with one migrated, mapped cell; helpers register services and nodes."""

    services: ApiServices
    api: ApiClient
    cell: sa.Engine

    def service(self, host: str, binary: str, **values: Any) -> repo.ServiceRecord:
        values.setdefault("last_seen_up", now())
        with self.cell.begin() as conn:
            return repo.create_service(conn, host, binary, **values)

    def compute(self, host: str, node: str | None = None, **values: Any) -> Any:
        """A mapped nova-compute service with one compute node."""
        svc = self.service(host, "nova-compute", **values)
        with self.services.api_db.begin() as conn:
            repo.map_host(conn, CELL1, host)
        with self.cell.begin() as conn:
            cn = nodes_repo.create_compute_node(
                conn, host, node or host, service_id=svc.id, vcpus=8, memory_mb=8192,
                local_gb=100, free_ram_mb=7680, free_disk_gb=100, current_workload=0,
                running_vms=0, disk_available_least=90, host_ip="192.168.1.135",
            )  # fmt: skip
        return svc, cn

    def instance(self, host: str, name: str = "vm", **values: Any) -> str:
        server_uuid = str(uuid.uuid4())
        with self.cell.begin() as conn:
            conn.execute(
                sa.insert(cell_tables.instances).values(
                    **{"project_id": "p", "user_id": "u", **values},
                    uuid=server_uuid, host=host, node=host, display_name=name, deleted=0,
                )
            )  # fmt: skip
        return server_uuid

    def get_service(self, service_id: int) -> repo.ServiceRecord | None:
        with self.cell.connect() as conn:
            return repo.get_service(conn, service_id)


def build_cloud(tmp_path: Path) -> Iterator[Cloud]:
    """A fresh API whose ``cell_dbs`` holds one migrated cell mapped in the API DB."""
    services = make_services(tmp_path)
    cell = make_engine(f"sqlite:///{tmp_path / 'cell1.sqlite'}")
    migrate.upgrade(cell, "cell")
    with services.api_db.begin() as conn:
        conn.execute(
            sa.insert(api_tables.cell_mappings).values(
                uuid=CELL1, name="cell1", transport_url="none:///", database_connection="x"
            )
        )
    services.cell_dbs[CELL1] = cell
    client = ApiClient(build_api_app(services))
    yield Cloud(services, client, cell)
    client.close()
    cell.dispose()
    services.api_db.dispose()


@pytest.fixture
def cloud(tmp_path: Path) -> Iterator[Cloud]:
    yield from build_cloud(tmp_path)


def _fault(resp: Any, status: int, message: str) -> None:
    assert resp.status_code == status, resp.text
    assert next(iter(resp.json().values()))["message"] == message


# --- GET ----------------------------------------------------------------------------------


def test_list_per_microversion(cloud: Cloud) -> None:
    svc, _ = cloud.compute("host1", disabled=True, disabled_reason="test2")
    sched = cloud.service(
        "host1", "nova-scheduler", last_seen_up=now() - datetime.timedelta(hours=1)
    )
    cloud.service("host1", "nova-osapi_compute")
    v21 = cloud.api.get("/v2.1/os-services", token="admin:admin").json()["services"]
    assert v21 == [
        {"binary": "nova-compute", "host": "host1", "id": svc.id, "zone": "nova",
         "status": "disabled", "state": "up", "updated_at": None, "disabled_reason": "test2"},
        {"binary": "nova-scheduler", "host": "host1", "id": sched.id, "zone": "internal",
         "status": "enabled", "state": "down", "updated_at": None, "disabled_reason": None},
    ]  # fmt: skip
    v211 = cloud.api.get("/v2.1/os-services", version="2.11", token="admin:admin").json()
    assert [s["forced_down"] for s in v211["services"]] == [False, False]
    assert v211["services"][0]["id"] == svc.id
    v253 = cloud.api.get("/v2.1/os-services", version="2.53", token="admin:admin").json()
    assert [s["id"] for s in v253["services"]] == [svc.uuid, sched.uuid]


def test_list_filters_and_forced_down_state(cloud: Cloud) -> None:
    cloud.compute("host1", forced_down=True)
    cloud.compute("host2")
    cloud.service("host2", "nova-conductor")
    resp = cloud.api.get("/v2.1/os-services?host=host2&binary=nova-compute", token="admin:admin")
    assert [(s["host"], s["state"]) for s in resp.json()["services"]] == [("host2", "up")]
    resp = cloud.api.get("/v2.1/os-services?binary=nova-compute", token="admin:admin")
    assert [(s["host"], s["state"]) for s in resp.json()["services"]] == [
        ("host1", "down"),
        ("host2", "up"),
    ]


def test_list_unknown_query_parameter(cloud: Cloud) -> None:
    assert (
        cloud.api.get("/v2.1/os-services?foo=1", version="2.74", token="admin:admin").status_code
        == 200
    )
    resp = cloud.api.get("/v2.1/os-services?foo=1", version="2.75", token="admin:admin")
    _fault(resp, 400, "Additional properties are not allowed ('foo' was unexpected)")


def test_policies_are_admin_only(cloud: Cloud) -> None:
    svc, _ = cloud.compute("host1")
    for method, path, body, version, rule in (
        ("GET", "/v2.1/os-services", None, None, "list"),
        ("PUT", "/v2.1/os-services/enable", {"host": "host1", "binary": "nova-compute"}, None, "update"),
        ("PUT", f"/v2.1/os-services/{svc.uuid}", {"status": "enabled"}, "2.53", "update"),
        ("DELETE", f"/v2.1/os-services/{svc.uuid}", None, "2.53", "delete"),
    ):  # fmt: skip
        resp = cloud.api.request(method, path, json=body, version=version, token="demo:demo")
        _fault(
            resp, 403, f"Policy doesn't allow os_compute_api:os-services:{rule} to be performed."
        )


# --- PUT before 2.53 ----------------------------------------------------------------------


def test_enable_disable_actions(cloud: Cloud) -> None:
    svc, _ = cloud.compute("host1")
    body = {"host": "host1", "binary": "nova-compute"}
    resp = cloud.api.put("/v2.1/os-services/disable", json=body, token="admin:admin")
    assert resp.status_code == 200
    assert resp.json() == {
        "service": {"host": "host1", "binary": "nova-compute", "status": "disabled"}
    }
    assert cloud.get_service(svc.id).disabled is True  # type: ignore[union-attr]
    resp = cloud.api.put(
        "/v2.1/os-services/disable-log-reason", json={**body, "disabled_reason": "maint"},
        token="admin:admin",
    )  # fmt: skip
    assert resp.json() == {"service": {"host": "host1", "binary": "nova-compute",
                                       "status": "disabled", "disabled_reason": "maint"}}  # fmt: skip
    assert cloud.get_service(svc.id).disabled_reason == "maint"  # type: ignore[union-attr]
    resp = cloud.api.put("/v2.1/os-services/enable", json=body, token="admin:admin")
    assert resp.json()["service"]["status"] == "enabled"
    fresh = cloud.get_service(svc.id)
    assert fresh is not None and (fresh.disabled, fresh.disabled_reason) == (False, None)


def test_action_errors(cloud: Cloud) -> None:
    cloud.compute("host1")
    cloud.service("host1", "nova-scheduler")
    body = {"host": "host1", "binary": "nova-compute"}
    put = cloud.api.put
    _fault(put("/v2.1/os-services/disable-log-reason", json=body, token="admin:admin"), 400,
           "Missing disabled reason field")  # fmt: skip
    _fault(put("/v2.1/os-services/bogus", json=body, token="admin:admin"), 404, "Unknown action")
    _fault(
        put("/v2.1/os-services/force-down", json=body, token="admin:admin"), 404, "Unknown action"
    )
    _fault(put("/v2.1/os-services/enable", json={"host": "host1", "binary": "nova-scheduler"},
               token="admin:admin"), 400,
           "Updating a nova-scheduler service is not supported. Only nova-compute services can be updated.")  # fmt: skip
    _fault(put("/v2.1/os-services/enable", json={"host": "nowhere", "binary": "nova-compute"},
               token="admin:admin"), 404, "Host 'nowhere' is not mapped to any cell")  # fmt: skip
    resp = put("/v2.1/os-services/enable", json={"host": "host1"}, token="admin:admin")
    assert resp.status_code == 400


def test_force_down_from_211(cloud: Cloud) -> None:
    svc, _ = cloud.compute("host1")
    body = {"host": "host1", "binary": "nova-compute", "forced_down": True}
    resp = cloud.api.put(
        "/v2.1/os-services/force-down", json=body, version="2.11", token="admin:admin"
    )
    assert resp.json() == {
        "service": {"host": "host1", "binary": "nova-compute", "forced_down": True}
    }
    assert cloud.get_service(svc.id).forced_down is True  # type: ignore[union-attr]
    listed = cloud.api.get("/v2.1/os-services", version="2.11", token="admin:admin").json()
    assert (listed["services"][0]["state"], listed["services"][0]["forced_down"]) == ("down", True)
    resp = cloud.api.put("/v2.1/os-services/force-down", json={"host": "host1", "binary": "nova-compute"},
                         version="2.11", token="admin:admin")  # fmt: skip
    _fault(resp, 400, "Missing forced_down field")
    resp = cloud.api.put(
        "/v2.1/os-services/disable", json=body, version="2.10", token="admin:admin"
    )
    assert resp.status_code == 400  # forced_down is not in the 2.1 schema


def test_force_up_refused_with_done_evacuations(cloud: Cloud) -> None:
    svc, _ = cloud.compute("host1", forced_down=True)
    with cloud.cell.begin() as conn:
        conn.execute(sa.insert(cell_tables.migrations).values(
            source_compute="host1", status="done", migration_type="evacuation", deleted=0))  # fmt: skip
    resp = cloud.api.put(f"/v2.1/os-services/{svc.uuid}", json={"forced_down": False},
                         version="2.53", token="admin:admin")  # fmt: skip
    _fault(resp, 400, "Unable to force up host host1 as `done` evacuation migration records "
           "remain associated with the host. Ensure the compute service has been restarted, "
           "allowing these records to move to `completed` before retrying this request.")  # fmt: skip


# --- PUT from 2.53 ------------------------------------------------------------------------


def test_update_by_uuid(cloud: Cloud) -> None:
    svc, _ = cloud.compute("host1")
    path = f"/v2.1/os-services/{svc.uuid}"
    resp = cloud.api.put(path, json={"status": "disabled", "disabled_reason": "maint",
                                     "forced_down": True}, version="2.53", token="admin:admin")  # fmt: skip
    assert resp.status_code == 200
    body = resp.json()["service"]
    updated_at = body.pop("updated_at")
    assert updated_at is not None
    assert body == {"binary": "nova-compute", "host": "host1", "id": svc.uuid, "zone": "nova",
                    "status": "disabled", "state": "down", "disabled_reason": "maint",
                    "forced_down": True}  # fmt: skip
    resp = cloud.api.put(path, json={"status": "enabled"}, version="2.53", token="admin:admin")
    body = resp.json()["service"]
    assert (body["status"], body["disabled_reason"], body["forced_down"]) == ("enabled", None, True)


def test_update_by_uuid_errors(cloud: Cloud) -> None:
    svc, _ = cloud.compute("host1")
    sched = cloud.service("host1", "nova-scheduler")

    def put(target: str, body: Any) -> Any:
        return cloud.api.put(f"/v2.1/os-services/{target}", json=body, version="2.53",
                             token="admin:admin")  # fmt: skip

    _fault(put("enable", {"status": "enabled"}), 400, "Invalid uuid enable")
    missing = str(uuid.uuid4())
    _fault(put(missing, {"status": "enabled"}), 404, f"Service {missing} could not be found.")
    _fault(put(sched.uuid or "", {"status": "enabled"}), 400,
           "Updating a nova-scheduler service is not supported. Only nova-compute services can be updated.")  # fmt: skip
    _fault(put(svc.uuid or "", {"status": "enabled", "disabled_reason": "x"}), 400,
           "Specifying 'disabled_reason' with status 'enabled' is invalid.")  # fmt: skip
    _fault(put(svc.uuid or "", {}), 400,
           "No updates were requested. Fields 'status' or 'forced_down' should be specified.")  # fmt: skip
    assert put(svc.uuid or "", {"host": "host1"}).status_code == 400


# --- DELETE -------------------------------------------------------------------------------


def test_delete_compute_service(cloud: Cloud) -> None:
    svc, cn = cloud.compute("host1")
    resp = cloud.api.delete(f"/v2.1/os-services/{svc.uuid}", version="2.53", token="admin:admin")
    assert resp.status_code == 204
    assert cloud.get_service(svc.id) is None
    with cloud.cell.connect() as conn:
        assert nodes_repo.get_node(conn, cn.id) is None
    with cloud.services.api_db.connect() as conn:
        assert repo.host_cell(conn, "host1") is None
    resp = cloud.api.delete(f"/v2.1/os-services/{svc.uuid}", version="2.53", token="admin:admin")
    _fault(resp, 404, f"Service {svc.uuid} could not be found.")


def test_delete_by_integer_id_before_253(cloud: Cloud) -> None:
    sched = cloud.service("host1", "nova-scheduler")
    _fault(cloud.api.delete("/v2.1/os-services/abc", token="admin:admin"), 400,
           "Invalid input received: id must be an integer")  # fmt: skip
    _fault(cloud.api.delete(f"/v2.1/os-services/{sched.uuid}", token="admin:admin"), 400,
           "Invalid input received: id must be an integer")  # fmt: skip
    _fault(cloud.api.delete("/v2.1/os-services/999", token="admin:admin"), 404,
           "Service 999 could not be found.")  # fmt: skip
    assert cloud.api.delete(f"/v2.1/os-services/{sched.id}", token="admin:admin").status_code == 204
    _fault(cloud.api.delete(f"/v2.1/os-services/{sched.id}", version="2.53", token="admin:admin"),
           400, f"Invalid uuid {sched.id}")  # fmt: skip


def test_delete_refuses_hosting_compute(cloud: Cloud) -> None:
    svc, _ = cloud.compute("host1")
    cloud.instance("host1")
    resp = cloud.api.delete(f"/v2.1/os-services/{svc.uuid}", version="2.53", token="admin:admin")
    _fault(resp, 409, "Unable to delete compute service that is hosting instances. Migrate or "
           "delete the instances first.")  # fmt: skip
    assert cloud.get_service(svc.id) is not None


def test_delete_refuses_in_progress_migrations(cloud: Cloud) -> None:
    svc, _ = cloud.compute("host1")
    with cloud.cell.begin() as conn:
        conn.execute(sa.insert(cell_tables.migrations).values(
            dest_compute="host1", dest_node="host1", status="migrating", deleted=0))  # fmt: skip
    resp = cloud.api.delete(f"/v2.1/os-services/{svc.uuid}", version="2.53", token="admin:admin")
    _fault(resp, 409, "Unable to delete compute service that has in-progress migrations. "
           "Complete the migrations or delete the instances first.")  # fmt: skip
