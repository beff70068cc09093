"""os-migrateLive and /servers/{id}/migrations at the API tier: Nova's schemas per microversion,
policies, errors, state gates, and what is cast to conductor / compute."""

from __future__ import annotations

from typing import Any

import pytest

from openkeel.api.services import ApiServices
from openkeel.db.repositories import compute_nodes, instance_actions, instances, migrations
from openkeel.domain.instances import InstanceUpdate
from tests.api.server_fakes import ADMIN, USER, Recorder, create, flavor, place
from tests.client import ApiClient
from tests.conftest import CELL1_UUID


def _live(api: ApiClient, sid: str, body: Any, version: str, token: str = ADMIN) -> Any:
    return api.post(
        f"/v2.1/servers/{sid}/action", json={"os-migrateLive": body}, token=token, version=version
    )


def _error(resp: Any, status: int, message: str) -> None:
    assert resp.status_code == status, resp.text
    (fault,) = resp.json().values()
    assert fault["message"] == message


@pytest.fixture
def active(api: ApiClient, services: ApiServices, roles: Any) -> str:
    flavor(api)
    sid: str = create(api)["server"]["id"]
    place(services, sid)
    with services.cell_dbs[CELL1_UUID].begin() as conn:
        compute_nodes.create_compute_node(conn, "host2", "host2-node")
    return sid


def _instance(services: ApiServices, sid: str) -> Any:
    with services.cell_dbs[CELL1_UUID].connect() as conn:
        return instances.get(conn, sid)


def _cast(roles: tuple[Recorder, Recorder]) -> dict[str, Any]:
    name, call = roles[0].calls[-1]
    assert name == "live_migrate_instance"
    return call


def test_live_migrate_casts_conductor(
    api: ApiClient, services: ApiServices, active: str, roles: tuple[Recorder, Recorder]
) -> None:
    resp = _live(api, active, {"host": None, "block_migration": "auto"}, "2.25")
    assert resp.status_code == 202, resp.text
    assert resp.content == b""
    assert _instance(services, active).task_state == "migrating"
    call = _cast(roles)
    assert (call["scheduler_hint"], call["block_migration"]) == ({"host": None}, None)
    with services.cell_dbs[CELL1_UUID].connect() as conn:
        assert [a.action for a in instance_actions.list_actions(conn, active)] == ["live-migration"]
    show = api.get(f"/v2.1/servers/{active}", token=USER).json()["server"]
    assert show["status"] == "MIGRATING"


def test_v21_needs_disk_over_commit_and_parses_booleans(
    api: ApiClient, active: str, roles: tuple[Recorder, Recorder]
) -> None:
    resp = _live(api, active, {"host": None, "block_migration": "true"}, "2.1")
    assert resp.status_code == 400
    assert "'disk_over_commit' is a required property" in resp.text
    body = {"host": None, "block_migration": "true", "disk_over_commit": "off"}
    assert _live(api, active, body, "2.1").status_code == 202
    call = _cast(roles)
    assert (call["scheduler_hint"], call["block_migration"]) == ({"host": None}, True)


def test_v225_rejects_disk_over_commit(api: ApiClient, active: str) -> None:
    body = {"host": None, "block_migration": False, "disk_over_commit": False}
    resp = _live(api, active, body, "2.25")
    assert resp.status_code == 400
    assert "Additional properties are not allowed" in resp.text


def test_force_needs_host(api: ApiClient, active: str) -> None:
    body = {"host": None, "block_migration": "auto", "force": True}
    _error(_live(api, active, body, "2.30"), 400, "Can't force to a non-provided destination")


def test_forced_host_goes_to_conductor(
    api: ApiClient, active: str, roles: tuple[Recorder, Recorder]
) -> None:
    body = {"host": "host2", "block_migration": "auto", "force": True}
    assert _live(api, active, body, "2.30").status_code == 202
    call = _cast(roles)
    assert call["scheduler_hint"] == {"host": "host2"}
    assert call["request_spec"].get("requested_destination") is None


def test_v268_host_goes_through_the_scheduler(
    api: ApiClient, active: str, roles: tuple[Recorder, Recorder]
) -> None:
    forced = {"host": "host2", "block_migration": "auto", "force": True}
    assert _live(api, active, forced, "2.68").status_code == 400
    assert (
        _live(api, active, {"host": "host2", "block_migration": "auto"}, "2.68").status_code == 202
    )
    call = _cast(roles)
    assert call["scheduler_hint"] == {"host": None}
    assert call["request_spec"]["requested_destination"] == {"host": "host2", "node": "host2-node"}


def test_unknown_host(api: ApiClient, active: str) -> None:
    resp = _live(api, active, {"host": "nohost", "block_migration": "auto"}, "2.68")
    _error(resp, 400, "Compute host nohost could not be found.")


@pytest.mark.parametrize(
    ("host", "rule"),
    [(None, "migrate_live"), ("host2", "migrate_live:host")],
)
def test_policies(api: ApiClient, active: str, host: str | None, rule: str) -> None:
    resp = _live(api, active, {"host": host, "block_migration": "auto"}, "2.68", token=USER)
    _error(
        resp, 403, f"Policy doesn't allow os_compute_api:os-migrate-server:{rule} to be performed."
    )


def test_state_gate(api: ApiClient, services: ApiServices, active: str) -> None:
    with services.cell_dbs[CELL1_UUID].begin() as conn:
        instances.update(conn, active, InstanceUpdate(vm_state="stopped", power_state=4))
    resp = _live(api, active, {"host": None, "block_migration": "auto"}, "2.68")
    _error(resp, 409, f"Cannot 'os-migrateLive' instance {active} while it is in vm_state stopped")


# --- /servers/{id}/migrations --------------------------------------------------------------


def _migration(services: ApiServices, sid: str, status: str, kind: str = "live-migration") -> int:
    with services.cell_dbs[CELL1_UUID].begin() as conn:
        instances.update(conn, sid, InstanceUpdate(task_state="migrating"))
        made = migrations.create(
            conn, instance_uuid=sid, migration_type=kind, status=status,
            source_compute="host1", source_node="host1", dest_compute="host2",
            dest_node="host2-node", dest_host="host2", user_id="demo", project_id="demo",
            memory_total=100, memory_processed=40, memory_remaining=60,
        )  # fmt: skip
        made = migrations.update(conn, made.id, status=status)  # sets updated_at, as the flow does
    return made.id


def test_list_in_progress_per_version(api: ApiClient, services: ApiServices, active: str) -> None:
    running = _migration(services, active, "running")
    _migration(services, active, "completed")
    _migration(services, active, "finished", kind="resize")
    path = f"/v2.1/servers/{active}/migrations"
    assert api.get(path, version="2.22", token=ADMIN).status_code == 404
    (item,) = api.get(path, version="2.23", token=ADMIN).json()["migrations"]
    assert set(item) == {
        "created_at", "dest_compute", "dest_host", "dest_node", "disk_processed_bytes",
        "disk_remaining_bytes", "disk_total_bytes", "id", "memory_processed_bytes",
        "memory_remaining_bytes", "memory_total_bytes", "server_uuid", "source_compute",
        "source_node", "status", "updated_at",
    }  # fmt: skip
    assert (item["id"], item["status"], item["memory_processed_bytes"]) == (running, "running", 40)
    assert "uuid" in api.get(path, version="2.59", token=ADMIN).json()["migrations"][0]
    (item,) = api.get(path, version="2.80", token=ADMIN).json()["migrations"]
    assert (item["user_id"], item["project_id"], item["dest_compute"]) == ("demo", "demo", "host2")


def test_show_errors(api: ApiClient, services: ApiServices, active: str) -> None:
    done = _migration(services, active, "completed")
    cold = _migration(services, active, "finished", kind="resize")
    base = f"/v2.1/servers/{active}/migrations"
    _error(api.get(f"{base}/{done}", version="2.23", token=ADMIN), 404,
           f"Live migration {done} for server {active} is not in progress.")  # fmt: skip
    _error(api.get(f"{base}/{cold}", version="2.23", token=ADMIN), 404,
           f"Migration {cold} for server {active} is not live-migration.")  # fmt: skip
    _error(api.get(f"{base}/999", version="2.23", token=ADMIN), 404,
           f"In-progress live migration 999 is not found for server {active}.")  # fmt: skip
    running = _migration(services, active, "running")
    body = api.get(f"{base}/{running}", version="2.23", token=ADMIN).json()["migration"]
    assert body["id"] == running


@pytest.mark.parametrize("mid", ["9" * 30, "\u00b2", "\u0661"])
def test_migration_ids_no_row_can_have(api: ApiClient, active: str, mid: str) -> None:
    """Past 64 bits (an OverflowError binding it) or digits int() refuses: 404, as for any
    unknown id, not a 500 (found by tests/fuzz)."""
    resp = api.get(f"/v2.1/servers/{active}/migrations/{mid}", version="2.23", token=ADMIN)
    _error(resp, 404, f"In-progress live migration {mid} is not found for server {active}.")


def test_abort(
    api: ApiClient, services: ApiServices, active: str, roles: tuple[Recorder, Recorder]
) -> None:
    running = _migration(services, active, "running")
    base = f"/v2.1/servers/{active}/migrations"
    assert api.delete(f"{base}/{running}", version="2.23", token=ADMIN).status_code == 404
    resp = api.delete(f"{base}/{running}", version="2.24", token=ADMIN)
    assert resp.status_code == 202, resp.text
    name, call = roles[1].calls[-1]
    assert (name, call["migration_id"]) == ("live_migration_abort", running)
    done = _migration(services, active, "completed")
    _error(api.delete(f"{base}/{done}", version="2.24", token=ADMIN), 400,
           f"Migration {done} state of instance {active} is completed. Cannot abort live "
           "migration while the migration is in this state.")  # fmt: skip
    _error(api.delete(f"{base}/999", version="2.24", token=ADMIN), 404,
           f"Migration 999 not found for instance {active}")  # fmt: skip
    with services.cell_dbs[CELL1_UUID].begin() as conn:
        instances.update(conn, active, InstanceUpdate(task_state=None))
    _error(api.delete(f"{base}/{running}", version="2.24", token=ADMIN), 409,
           f"Instance {active} is in an invalid state for 'abort live migration'")  # fmt: skip


def test_force_complete(
    api: ApiClient, services: ApiServices, active: str, roles: tuple[Recorder, Recorder]
) -> None:
    preparing = _migration(services, active, "preparing")
    path = f"/v2.1/servers/{active}/migrations/{preparing}/action"
    body = {"force_complete": None}
    _error(api.post(path, json=body, version="2.22", token=ADMIN), 400,
           f"Migration {preparing} state of instance {active} is preparing. Cannot force "
           "complete while the migration is in this state.")  # fmt: skip
    running = _migration(services, active, "running")
    path = f"/v2.1/servers/{active}/migrations/{running}/action"
    assert api.post(path, json=body, version="2.21", token=ADMIN).status_code == 404
    assert (
        api.post(path, json={"force_complete": 1}, version="2.22", token=ADMIN).status_code == 400
    )
    resp = api.post(path, json=body, version="2.22", token=ADMIN)
    assert resp.status_code == 202, resp.text
    assert roles[1].calls[-1][0] == "live_migration_force_complete"
    _error(api.post(path, json=body, version="2.22", token=USER), 403,
           "Policy doesn't allow os_compute_api:servers:migrations:force_complete to be performed.")  # fmt: skip
