"""pause/unpause, suspend/resume, lock/unlock, os-resetState and injectNetworkInfo at the API:
microversions, policies, locked and state errors, task states, instance actions and the casts
to a fake compute client."""

from __future__ import annotations

from typing import Any

import pytest

from openkeel.api.services import ApiServices
from openkeel.db.repositories import instance_actions, instances
from openkeel.domain.instances import InstanceUpdate
from tests.api.server_fakes import ADMIN, USER, Recorder, create, flavor, place, wire
from tests.client import ApiClient
from tests.conftest import CELL1_UUID

OTHER = "eve:other"
MISSING = "6b8b4567-0000-4000-8000-00000000ffff"
READER = {"X-Roles": "reader"}


def _error(resp: Any, status: int, message: str) -> None:
    assert resp.status_code == status, resp.text
    (fault,) = resp.json().values()
    assert fault["message"] == message


def _action(
    api: ApiClient, sid: str, body: Any, token: str = USER, version: str = "2.1", **kw: Any
) -> Any:
    return api.post(f"/v2.1/servers/{sid}/action", json=body, token=token, version=version, **kw)


def _row(services: ApiServices, sid: str) -> Any:
    with services.cell_dbs[CELL1_UUID].connect() as conn:
        return instances.get(conn, sid)


def _set(services: ApiServices, sid: str, **changes: Any) -> None:
    with services.cell_dbs[CELL1_UUID].begin() as conn:
        instances.update(conn, sid, InstanceUpdate(**changes))


def _actions(services: ApiServices, sid: str) -> list[Any]:
    with services.cell_dbs[CELL1_UUID].connect() as conn:
        return list(instance_actions.list_actions(conn, sid))


@pytest.fixture
def compute(services: ApiServices) -> Recorder:
    return wire(services)[1]


@pytest.fixture
def active(api: ApiClient, services: ApiServices) -> str:
    flavor(api)
    sid: str = create(api)["server"]["id"]
    place(services, sid)
    return sid


TRANSITIONS = [
    # key, vm_state before, task_state set, cast method
    ("pause", "active", "pausing", "pause_instance"),
    ("unpause", "paused", "unpausing", "unpause_instance"),
    ("suspend", "active", "suspending", "suspend_instance"),
    ("resume", "suspended", "resuming", "resume_instance"),
]


@pytest.mark.parametrize(("key", "before", "task", "method"), TRANSITIONS)
def test_transition_casts_and_records_action(
    api: ApiClient, services: ApiServices, compute: Recorder, active: str,
    key: str, before: str, task: str, method: str,
) -> None:  # fmt: skip
    _set(services, active, vm_state=before)
    resp = _action(api, active, {key: None})
    assert resp.status_code == 202, resp.text
    assert resp.content == b""
    assert _row(services, active).task_state == task
    assert compute.names() == [method]
    context = compute.calls[0][1]["context"]
    assert compute.calls[0][1]["instance_uuid"] == active
    (action,) = [a for a in _actions(services, active) if a.action == key]
    assert action.request_id == context.request_id
    assert (action.user_id, action.project_id) == ("demo", "demo")


@pytest.mark.parametrize(("key", "before", "task", "method"), TRANSITIONS)
def test_transition_in_wrong_state_is_409(
    api: ApiClient, services: ApiServices, compute: Recorder, active: str,
    key: str, before: str, task: str, method: str,
) -> None:  # fmt: skip
    wrong = "stopped"
    _set(services, active, vm_state=wrong)
    resp = _action(api, active, {key: None})
    _error(resp, 409, f"Cannot '{key}' instance {active} while it is in vm_state {wrong}")
    _set(services, active, vm_state=before, task_state="rebooting")
    resp = _action(api, active, {key: {}})
    _error(resp, 409, f"Cannot '{key}' instance {active} while it is in task_state rebooting")
    assert compute.calls == []


@pytest.mark.parametrize("key", ["pause", "unpause", "suspend", "resume"])
def test_transition_404_403_and_locked(
    api: ApiClient, services: ApiServices, compute: Recorder, active: str, key: str
) -> None:
    _error(_action(api, MISSING, {key: None}), 404, f"Instance {MISSING} could not be found.")
    # Another project's server is invisible to a member.
    _error(
        _action(api, active, {key: None}, token=OTHER),
        404,
        f"Instance {active} could not be found.",
    )
    resp = _action(api, active, {key: None}, headers=READER)
    policy = {"pause": "pause-server", "unpause": "pause-server"}.get(key, "suspend-server")
    _error(resp, 403, f"Policy doesn't allow os_compute_api:os-{policy}:{key} to be performed.")
    _set(services, active, locked=True, locked_by="owner")
    _error(_action(api, active, {key: None}), 409, f"Instance {active} is locked")
    assert compute.calls == []


def test_admin_may_pause_locked_server(
    api: ApiClient, services: ApiServices, compute: Recorder, active: str
) -> None:
    _set(services, active, locked=True, locked_by="owner")
    assert _action(api, active, {"pause": None}, token=ADMIN).status_code == 202
    assert compute.names() == ["pause_instance"]


def test_transition_body_is_validated(api: ApiClient, active: str) -> None:
    resp = _action(api, active, {"pause": None, "extra": 1})
    assert resp.status_code == 400, resp.text
    assert resp.json()["badRequest"]["message"] == "Malformed request body"


def test_transition_of_a_build_request_is_409(
    api: ApiClient, services: ApiServices, compute: Recorder
) -> None:
    flavor(api)
    sid = create(api)["server"]["id"]
    resp = _action(api, sid, {"pause": None})
    _error(resp, 409, f"Cannot 'pause' instance {sid} while it is in vm_state building")


def _show(api: ApiClient, sid: str, version: str = "2.73", token: str = USER) -> Any:
    return api.get(f"/v2.1/servers/{sid}", version=version, token=token).json()["server"]


def test_lock_unlock_by_owner(api: ApiClient, services: ApiServices, active: str) -> None:
    assert _show(api, active)["locked"] is False
    assert _action(api, active, {"lock": None}).status_code == 202
    row = _row(services, active)
    assert (row.locked, row.locked_by) == (True, "owner")
    shown = _show(api, active)
    assert (shown["locked"], shown["locked_reason"]) == (True, None)
    assert "locked_reason" not in _show(api, active, version="2.72")
    _error(api.delete(f"/v2.1/servers/{active}", token=USER), 409, f"Instance {active} is locked")
    assert _action(api, active, {"unlock": None}).status_code == 202
    row = _row(services, active)
    assert (row.locked, row.locked_by) == (False, None)
    assert [a.action for a in _actions(services, active)][-2:] in (
        ["lock", "unlock"],
        ["unlock", "lock"],
    )


def test_lock_reason_2_73(api: ApiClient, services: ApiServices, active: str) -> None:
    body = {"lock": {"locked_reason": "maintenance"}}
    resp = _action(api, active, body, version="2.72")
    assert resp.status_code == 202  # ignored before 2.73: any value goes
    assert _show(api, active)["locked_reason"] is None
    assert _action(api, active, {"unlock": None}).status_code == 202
    assert _action(api, active, body, version="2.73").status_code == 202
    assert _show(api, active)["locked_reason"] == "maintenance"
    assert _row(services, active).system_metadata["locked_reason"] == "maintenance"
    assert _action(api, active, {"unlock": None}, version="2.73").status_code == 202
    assert _show(api, active)["locked_reason"] is None
    assert "locked_reason" not in _row(services, active).system_metadata


@pytest.mark.parametrize(
    "body",
    [
        {"lock": {"locked_reason": ""}},
        {"lock": {"other": "x"}},
        {"lock": "x"},
        {"lock": {}, "x": 1},
    ],
)
def test_lock_body_2_73_is_validated(api: ApiClient, active: str, body: Any) -> None:
    resp = _action(api, active, body, version="2.73")
    assert resp.status_code == 400, resp.text
    assert _action(api, active, {"lock": "anything"}, version="2.72").status_code == 202


def test_owner_relock_changes_nothing(api: ApiClient, services: ApiServices, active: str) -> None:
    assert _action(api, active, {"lock": None}).status_code == 202
    assert _action(api, active, {"lock": None}).status_code == 202
    assert [a.action for a in _actions(services, active)].count("lock") == 1


def test_admin_lock_needs_override_to_unlock(
    api: ApiClient, services: ApiServices, active: str
) -> None:
    assert _action(api, active, {"lock": None}, token=ADMIN).status_code == 202
    assert _row(services, active).locked_by == "admin"
    resp = _action(api, active, {"unlock": None})
    _error(
        resp,
        403,
        "Policy doesn't allow os_compute_api:os-lock-server:unlock:unlock_override to be "
        "performed.",
    )
    assert _row(services, active).locked
    assert _action(api, active, {"unlock": None}, token=ADMIN).status_code == 202
    assert not _row(services, active).locked


def test_admin_relocks_owner_lock(api: ApiClient, services: ApiServices, active: str) -> None:
    assert _action(api, active, {"lock": None}).status_code == 202
    body = {"lock": {"locked_reason": "by admin"}}
    assert _action(api, active, body, token=ADMIN, version="2.73").status_code == 202
    row = _row(services, active)
    assert (row.locked_by, row.system_metadata["locked_reason"]) == ("admin", "by admin")


def test_lock_policies_and_404(api: ApiClient, active: str) -> None:
    for key in ("lock", "unlock"):
        resp = _action(api, MISSING, {key: None})
        _error(resp, 404, f"Instance {MISSING} could not be found.")
        _error(
            _action(api, active, {key: None}, headers=READER),
            403,
            f"Policy doesn't allow os_compute_api:os-lock-server:{key} to be performed.",
        )


def test_reset_state(api: ApiClient, services: ApiServices, active: str) -> None:
    _set(services, active, task_state="pausing")
    resp = _action(api, active, {"os-resetState": {"state": "error"}}, token=ADMIN)
    assert resp.status_code == 202, resp.text
    row = _row(services, active)
    assert (row.vm_state, row.task_state) == ("error", None)
    assert _show(api, active)["status"] == "ERROR"
    resp = _action(api, active, {"os-resetState": {"state": "active"}}, token=ADMIN)
    assert resp.status_code == 202
    assert _row(services, active).vm_state == "active"
    reset = [a for a in _actions(services, active) if a.action == "resetState"]
    assert len(reset) == 2 and all(a.finish_time is not None for a in reset)
    assert reset[0].user_id == "admin"


def test_reset_state_errors(api: ApiClient, services: ApiServices, active: str) -> None:
    resp = _action(api, active, {"os-resetState": {"state": "error"}})
    _error(resp, 403, "Policy doesn't allow os_compute_api:os-admin-actions:reset_state to be "
           "performed.")  # fmt: skip
    resp = _action(api, MISSING, {"os-resetState": {"state": "error"}}, token=ADMIN)
    _error(resp, 404, f"Instance {MISSING} could not be found.")
    bodies: list[Any] = [
        {"os-resetState": {"state": "paused"}},
        {"os-resetState": {}},
        {"os-resetState": None},
    ]
    for body in bodies:
        assert _action(api, active, body, token=ADMIN).status_code == 400
    # A lock does not stop an admin reset.
    _set(services, active, locked=True, locked_by="owner")
    resp = _action(api, active, {"os-resetState": {"state": "error"}}, token=ADMIN)
    assert resp.status_code == 202


def test_inject_network_info(
    api: ApiClient, services: ApiServices, compute: Recorder, active: str
) -> None:
    resp = _action(api, active, {"injectNetworkInfo": None}, token=ADMIN)
    assert resp.status_code == 202, resp.text
    assert compute.names() == ["inject_network_info"]
    resp = _action(api, active, {"injectNetworkInfo": None})
    _error(resp, 403, "Policy doesn't allow os_compute_api:os-admin-actions:inject_network_info "
           "to be performed.")  # fmt: skip
    resp = _action(api, MISSING, {"injectNetworkInfo": None}, token=ADMIN)
    _error(resp, 404, f"Instance {MISSING} could not be found.")


def test_reset_network_is_gone(api: ApiClient, active: str) -> None:
    assert _action(api, active, {"resetNetwork": None}, token=ADMIN).status_code == 410


def test_legacy_v2_mount(api: ApiClient, services: ApiServices, compute: Recorder) -> None:
    flavor(api)
    sid = create(api)["server"]["id"]
    place(services, sid)
    resp = api.post(f"/v2/servers/{sid}/action", json={"pause": None}, token=USER)
    assert resp.status_code == 202, resp.text
    assert compute.names() == ["pause_instance"]
