"""The resize, confirmResize, revertResize and migrate server actions at the API tier: Nova's
errors, policies, state gates, quota, and what is cast to conductor / compute."""

from __future__ import annotations

from typing import Any

import pytest

from openkeel.api.services import ApiServices
from openkeel.db.repositories import instance_actions, instances, migrations
from openkeel.domain import migrations as mstatus
from openkeel.domain.instances import InstanceUpdate
from tests.api.server_fakes import ADMIN, USER, Recorder, create, flavor, place
from tests.client import ApiClient
from tests.conftest import CELL1_UUID


def _action(api: ApiClient, sid: str, body: Any, token: str = USER, version: str = "2.1") -> Any:
    return api.post(f"/v2.1/servers/{sid}/action", json=body, token=token, version=version)


def _error(resp: Any, status: int, message: str) -> None:
    assert resp.status_code == status, resp.text
    (fault,) = resp.json().values()
    assert fault["message"] == message


@pytest.fixture
def active(api: ApiClient, services: ApiServices, roles: Any) -> str:
    flavor(api)
    flavor(api, "2", ram=1024, vcpus=2, disk=2)
    flavor(api, "0", ram=512, vcpus=1, disk=0)
    sid: str = create(api)["server"]["id"]
    place(services, sid)
    return sid


def _instance(services: ApiServices, sid: str) -> Any:
    with services.cell_dbs[CELL1_UUID].connect() as conn:
        return instances.get(conn, sid)


def test_resize_casts_migrate_server(
    api: ApiClient, services: ApiServices, active: str, roles: tuple[Recorder, Recorder]
) -> None:
    resp = _action(api, active, {"resize": {"flavorRef": "2", "OS-DCF:diskConfig": "AUTO"}})
    assert resp.status_code == 202, resp.text
    assert resp.content == b""
    inst = _instance(services, active)
    assert (inst.task_state, inst.auto_disk_config) == ("resize_prep", True)
    name, call = roles[0].calls[-1]
    assert name == "migrate_server"
    assert call["flavor"]["flavorid"] == "2"
    assert call["scheduler_hint"] == {"filter_properties": {"ignore_hosts": ["host1"]}}
    assert call["request_spec"]["ignore_hosts"] == ["host1"]
    assert call["host"] is None  # a cast to any conductor
    with services.cell_dbs[CELL1_UUID].connect() as conn:
        actions = instance_actions.list_actions(conn, active)
    assert [a.action for a in actions] == ["resize"]
    show = api.get(f"/v2.1/servers/{active}", token=USER).json()["server"]
    assert show["status"] == "RESIZE"


@pytest.mark.parametrize(
    ("flavor_ref", "message"),
    [
        ("1", "When resizing, instances must change flavor!"),
        ("404", "Flavor 404 could not be found."),
        (
            "0",
            "Server disk was unable to be resized because: "
            "Resize to zero disk flavor is not allowed.",
        ),
    ],
)
def test_resize_bad_flavor(
    api: ApiClient, active: str, roles: tuple[Recorder, Recorder], flavor_ref: str, message: str
) -> None:
    _error(_action(api, active, {"resize": {"flavorRef": flavor_ref}}), 400, message)
    assert roles[0].names() == ["schedule_and_build_instances"]


def test_resize_schema(api: ApiClient, active: str) -> None:
    resp = _action(api, active, {"resize": {}})
    assert resp.status_code == 400
    assert "'flavorRef' is a required property" in resp.text


def test_resize_over_quota(api: ApiClient, services: ApiServices, active: str) -> None:
    body = {"quota_set": {"cores": 1}}
    assert api.put("/v2.1/os-quota-sets/demo", json=body, token=ADMIN).status_code == 200
    _error(
        _action(api, active, {"resize": {"flavorRef": "2"}}),
        403,
        "Quota exceeded for cores: Requested 1, but already used 1 of 1 cores",
    )
    assert _instance(services, active).task_state is None


def test_resize_state_lock_and_policy(api: ApiClient, services: ApiServices, active: str) -> None:
    with services.cell_dbs[CELL1_UUID].begin() as conn:
        instances.update(conn, active, InstanceUpdate(task_state="powering-off"))
    _error(
        _action(api, active, {"resize": {"flavorRef": "2"}}),
        409,
        f"Cannot 'resize' instance {active} while it is in task_state powering-off",
    )
    with services.cell_dbs[CELL1_UUID].begin() as conn:
        instances.update(conn, active, InstanceUpdate(task_state=None, locked=True))
    _error(
        _action(api, active, {"resize": {"flavorRef": "2"}}), 409, f"Instance {active} is locked"
    )
    resp = _action(api, active, {"resize": {"flavorRef": "2"}}, token="other:other")
    assert resp.status_code == 404
    reader = api.post(
        f"/v2.1/servers/{active}/action",
        json={"resize": {"flavorRef": "2"}},
        token=USER,
        headers={"X-Roles": "reader"},
    )
    assert reader.status_code == 403


def _resized(services: ApiServices, sid: str) -> Any:
    with services.cell_dbs[CELL1_UUID].begin() as conn:
        instances.update(conn, sid, InstanceUpdate(vm_state="resized", host="host2"))
        return migrations.create(
            conn, instance_uuid=sid, migration_type="resize", status=mstatus.FINISHED,
            source_compute="host1", dest_compute="host2", source_node="host1",
            dest_node="host2",
        )  # fmt: skip


def test_confirm_and_revert(
    api: ApiClient, services: ApiServices, active: str, roles: tuple[Recorder, Recorder]
) -> None:
    for key in ("confirmResize", "revertResize"):
        _error(
            _action(api, active, {key: None}),
            409,
            f"Cannot '{key}' instance {active} while it is in vm_state active",
        )
    migration = _resized(services, active)
    resp = _action(api, active, {"confirmResize": None})
    assert resp.status_code == 204, resp.text
    ((name, call),) = roles[1].calls
    assert name == "confirm_resize"
    assert call["host"] == "host1"
    with services.cell_dbs[CELL1_UUID].begin() as conn:
        assert migrations.get(conn, migration.id).status == "confirming"
        migrations.update(conn, migration.id, status=mstatus.FINISHED)
    resp = _action(api, active, {"revertResize": None})
    assert resp.status_code == 202, resp.text
    name, call = roles[1].calls[-1]
    assert (name, call["host"]) == ("revert_resize", "host2")
    assert _instance(services, active).task_state == "resize_reverting"


def test_confirm_without_migration(api: ApiClient, services: ApiServices, active: str) -> None:
    with services.cell_dbs[CELL1_UUID].begin() as conn:
        instances.update(conn, active, InstanceUpdate(vm_state="resized"))
    _error(_action(api, active, {"confirmResize": None}), 400, "Instance has not been resized.")


def test_migrate_policy_and_host(
    api: ApiClient, services: ApiServices, active: str, roles: tuple[Recorder, Recorder]
) -> None:
    assert _action(api, active, {"migrate": None}).status_code == 403  # project manager/admin
    body = {"migrate": {"host": "host1"}}
    assert _action(api, active, body, token=USER, version="2.56").status_code == 403
    _error(
        _action(api, active, body, token=ADMIN, version="2.56"),
        400,
        "Cannot migrate to the host where the server exists.",
    )
    body = {"migrate": {"host": "nowhere"}}
    _error(
        _action(api, active, body, token=ADMIN, version="2.56"),
        400,
        "Compute host nowhere could not be found.",
    )
    assert _action(api, active, {"migrate": None}, token=ADMIN).status_code == 202
    name, call = roles[0].calls[-1]
    assert (name, call["flavor"]) == ("migrate_server", None)
    bad = _action(api, active, {"migrate": {"hots": "x"}}, token=ADMIN, version="2.56")
    assert bad.status_code == 400
