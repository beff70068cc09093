"""``PUT``/``DELETE /servers/{id}`` and the start, stop, reboot, forceDelete, restore actions."""

from __future__ import annotations

from typing import Any

import pytest

from openkeel.api.services import ApiServices
from openkeel.db.repositories import build_requests, instance_mappings, instances
from openkeel.domain.instances import InstanceUpdate
from tests.api.server_fakes import ADMIN, USER, create, flavor, host_up, place, wire
from tests.client import ApiClient
from tests.conftest import CELL1_UUID


def _error(resp: Any, status: int, message: str) -> None:
    assert resp.status_code == status, resp.text
    (fault,) = resp.json().values()
    assert fault["message"] == message


def _action(api: ApiClient, sid: str, body: Any, token: str = USER) -> Any:
    return api.post(f"/v2.1/servers/{sid}/action", json=body, token=token)


def _row(services: ApiServices, sid: str) -> Any:
    with services.cell_dbs[CELL1_UUID].connect() as conn:
        return instances.get(conn, sid, read_deleted="yes")


@pytest.fixture
def active(api: ApiClient, services: ApiServices) -> str:
    flavor(api)
    sid: str = create(api)["server"]["id"]
    place(services, sid)
    return sid


def test_update_per_version(api: ApiClient, active: str) -> None:
    body = {"server": {"name": "new", "accessIPv4": "1.2.3.4", "OS-DCF:diskConfig": "AUTO"}}
    resp = api.put(f"/v2.1/servers/{active}", json=body, token=USER)
    server = resp.json()["server"]
    assert (server["name"], server["accessIPv4"], server["OS-DCF:diskConfig"]) == (
        "new",
        "1.2.3.4",
        "AUTO",
    )
    assert "OS-EXT-STS:vm_state" not in server
    body = {"server": {"description": "d", "hostname": "h-1"}}
    server = api.put(f"/v2.1/servers/{active}", json=body, version="2.90", token=USER).json()
    assert (server["server"]["description"], server["server"]["OS-EXT-SRV-ATTR:hostname"]) == (
        "d",
        "h-1",
    )
    full = api.put(f"/v2.1/servers/{active}", json={"server": {}}, version="2.75", token=USER)
    assert full.json()["server"]["OS-EXT-STS:vm_state"] == "active"


def test_update_build_request(api: ApiClient, services: ApiServices) -> None:
    flavor(api)
    sid = create(api)["server"]["id"]
    resp = api.put(f"/v2.1/servers/{sid}", json={"server": {"name": "x"}}, token=USER)
    assert resp.json()["server"]["name"] == "x"
    with services.api_db.connect() as conn:
        assert build_requests.get(conn, sid).instance.display_name == "x"


def test_delete_while_building(api: ApiClient, services: ApiServices) -> None:
    flavor(api)
    sid = create(api)["server"]["id"]
    assert api.delete(f"/v2.1/servers/{sid}", token=USER).status_code == 204
    with services.api_db.connect() as conn:
        assert build_requests.find(conn, sid) is None
        assert instance_mappings.get_many(conn, [sid]) == {}
    assert api.get(f"/v2.1/servers/{sid}", token=USER).status_code == 404


def test_delete_casts_terminate(api: ApiClient, services: ApiServices, active: str) -> None:
    _, compute = wire(services)
    host_up(services)
    assert api.delete(f"/v2.1/servers/{active}", token=USER).status_code == 204
    assert compute.names() == ["terminate_instance"]
    assert _row(services, active).task_state == "deleting"
    # Still visible with its stable status until compute finishes.
    shown = api.get(f"/v2.1/servers/{active}", token=USER).json()["server"]
    assert shown["status"] == "ACTIVE"


def test_delete_with_host_down_is_local(api: ApiClient, services: ApiServices, active: str) -> None:
    _, compute = wire(services)
    assert api.delete(f"/v2.1/servers/{active}", token=USER).status_code == 204
    assert compute.calls == []
    assert _row(services, active).deleted
    with services.api_db.connect() as conn:
        assert instance_mappings.get(conn, active).queued_for_delete


def test_locked_server(api: ApiClient, services: ApiServices) -> None:
    flavor(api)
    sid = create(api)["server"]["id"]
    place(services, sid, locked=True, locked_by="owner")
    _error(api.delete(f"/v2.1/servers/{sid}", token=USER), 409, f"Instance {sid} is locked")
    _error(_action(api, sid, {"os-stop": None}), 409, f"Instance {sid} is locked")


def test_start_stop_reboot(api: ApiClient, services: ApiServices, active: str) -> None:
    _, compute = wire(services)
    resp = _action(api, active, {"os-start": None})
    _error(resp, 409, f"Cannot 'start' instance {active} while it is in vm_state active")
    assert _action(api, active, {"os-stop": None}).status_code == 202
    assert _row(services, active).task_state == "powering-off"
    resp = _action(api, active, {"reboot": {"type": "SOFT"}})
    _error(resp, 409, f"Cannot 'reboot' instance {active} while it is in task_state powering-off")
    assert compute.names() == ["stop_instance"]
    with services.cell_dbs[CELL1_UUID].begin() as conn:
        from openkeel.domain.instances import InstanceUpdate

        instances.update(conn, active, InstanceUpdate(task_state=None))
    assert _action(api, active, {"reboot": {"type": "hard"}}).status_code == 202
    assert compute.calls[-1][1]["reboot_type"] == "HARD"
    assert _row(services, active).task_state == "rebooting_hard"


def test_soft_delete_restore_force_delete(
    api: ApiClient, services: ApiServices, active: str
) -> None:
    services.conf.set_override("reclaim_instance_interval", 3600)
    assert api.delete(f"/v2.1/servers/{active}", token=USER).status_code == 204
    shown = api.get(f"/v2.1/servers/{active}", token=USER).json()["server"]
    assert shown["status"] == "SOFT_DELETED"
    assert _action(api, active, {"restore": None}).status_code == 202
    assert api.get(f"/v2.1/servers/{active}", token=USER).json()["server"]["status"] == "ACTIVE"
    resp = _action(api, active, {"restore": None})
    _error(resp, 409, f"Cannot 'restore' instance {active} while it is in vm_state active")
    assert api.delete(f"/v2.1/servers/{active}", token=USER).status_code == 204
    assert _action(api, active, {"forceDelete": None}).status_code == 202
    assert api.get(f"/v2.1/servers/{active}", token=USER).status_code == 404


def _queued(services: ApiServices, sid: str) -> bool:
    with services.api_db.connect() as conn:
        return bool(instance_mappings.get(conn, sid).queued_for_delete)


def test_soft_delete_queues_the_mapping_and_restore_records_its_action(
    api: ApiClient, services: ApiServices, active: str
) -> None:
    """As Nova: a soft-deleted server's mapping is queued for deletion until restored, and
    restore is an instance action even when no compute host takes it (host down here)."""
    services.conf.set_override("reclaim_instance_interval", 3600)
    assert api.delete(f"/v2.1/servers/{active}", token=USER).status_code == 204
    assert _queued(services, active)
    with services.cell_dbs[CELL1_UUID].begin() as conn:
        instances.update(conn, active, InstanceUpdate(locked=True, locked_by="owner"))
    _error(_action(api, active, {"restore": None}), 409, f"Instance {active} is locked")
    _error(_action(api, active, {"forceDelete": None}), 409, f"Instance {active} is locked")
    with services.cell_dbs[CELL1_UUID].begin() as conn:
        instances.update(conn, active, InstanceUpdate(locked=False, locked_by=None))
    assert _action(api, active, {"restore": None}).status_code == 202
    assert not _queued(services, active)
    actions = api.get(f"/v2.1/servers/{active}/os-instance-actions", token=USER).json()
    # (the soft delete with the host down is local: no action, as Nova)
    assert [a["action"] for a in actions["instanceActions"]] == ["restore"]


def test_pending_actions(api: ApiClient, active: str) -> None:
    resp = _action(api, active, {"confirmResize": None})
    _error(resp, 409, f"Cannot 'confirmResize' instance {active} while it is in vm_state active")
    resp = _action(api, active, {"resize": {"flavorRef": "1"}})
    _error(resp, 400, "When resizing, instances must change flavor!")
    missing = "6b8b4567-0000-4000-8000-00000000ffff"
    resp = _action(api, missing, {"os-start": None})
    _error(resp, 404, f"Instance {missing} could not be found.")


def test_admin_may_delete_locked(api: ApiClient, services: ApiServices) -> None:
    flavor(api)
    sid = create(api)["server"]["id"]
    place(services, sid, locked=True, locked_by="owner")
    assert api.delete(f"/v2.1/servers/{sid}", token=ADMIN).status_code == 204


def test_pin_availability_zone_2_104(api: ApiClient, active: str) -> None:
    def pin(zone: str | None) -> Any:
        body = {"server": {"pinned_availability_zone": zone}}
        return api.put(f"/v2.1/servers/{active}", json=body, version="2.104", token=USER)

    _error(
        pin("other"),
        409,
        "Server can only be pinned to its current availability zone 'nova', but 'other' "
        "was requested.",
    )
    assert pin("nova").json()["server"]["pinned_availability_zone"] == "nova"
    _error(
        pin("other"),
        409,
        "Cannot change pinned availability zone directly. Unpin first by setting "
        "pinned_availability_zone to null.",
    )
    assert pin(None).json()["server"]["pinned_availability_zone"] is None
    resp = api.put(
        f"/v2.1/servers/{active}",
        json={"server": {"pinned_availability_zone": "nova"}},
        version="2.103",
        token=USER,
    )
    assert resp.status_code == 400
