"""rescue, unrescue, changePassword and trigger_crash_dump at the API tier: bodies, answers
(checked against Nova's and tempest's schemas by the conformance hook), policies, lock and
state errors with Nova's messages, task states, instance actions and what is sent to compute."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from openkeel.api.services import ApiServices
from openkeel.api.usecases.images import image_service
from openkeel.db.image_catalog import DEFAULT_IMAGE
from openkeel.db.repositories import compute_nodes, instance_actions
from openkeel.domain.errors import Conflict, NotImplementedYet
from tests.api.server_fakes import ADMIN, USER, Recorder, create, flavor, place, wire
from tests.api.test_server_actions_simple import _action, _error, _row, _set
from tests.client import ApiClient
from tests.conftest import CELL1_UUID

MISSING = "6b8b4567-0000-4000-8000-00000000ffff"
STABLE_IMAGE = "2b3c4d5e-0000-4000-8000-000000000087"
READER = {"X-Roles": "reader"}


def _actions(services: ApiServices, sid: str) -> list[str]:
    with services.cell_dbs[CELL1_UUID].connect() as conn:
        return [a.action for a in instance_actions.list_actions(conn, sid)]


@pytest.fixture
def compute(services: ApiServices) -> Recorder:
    return wire(services)[1]


@pytest.fixture
def active(api: ApiClient, services: ApiServices) -> str:
    flavor(api)
    sid: str = create(api)["server"]["id"]
    place(services, sid)
    return sid


# --- rescue ------------------------------------------------------------------------------


@pytest.mark.parametrize("body", [None, {}, {"adminPass": "MySecretPass"}])
@pytest.mark.parametrize("state", ["active", "stopped", "error"])
def test_rescue_answers_200_with_the_password_and_casts(
    api: ApiClient, services: ApiServices, compute: Recorder, active: str, body: Any, state: str
) -> None:
    _set(services, active, vm_state=state)
    resp = _action(api, active, {"rescue": body})
    assert resp.status_code == 200, resp.text
    password = resp.json()["adminPass"]
    if body:
        assert password == "MySecretPass"
    else:
        assert len(password) == 12
    ((name, call),) = compute.calls
    assert (name, call["host"], call["instance_uuid"]) == ("rescue_instance", "host1", active)
    assert (call["rescue_password"], call["rescue_image_ref"]) == (password, None)
    assert call["clean_shutdown"] is True
    assert _row(services, active).task_state == "rescuing"
    assert _actions(services, active) == ["rescue"]
    shown = api.get(f"/v2.1/servers/{active}", token=USER).json()["server"]
    assert shown["OS-EXT-STS:task_state"] == "rescuing"


def test_rescue_without_instance_passwords_answers_an_empty_body(
    api: ApiClient, services: ApiServices, compute: Recorder, active: str
) -> None:
    services.conf.set_override("enable_instance_password", False, group="api")
    resp = _action(api, active, {"rescue": {"adminPass": "x"}})
    assert (resp.status_code, resp.json()) == (200, {})
    assert compute.calls[0][1]["rescue_password"] == "x"


def test_rescue_with_an_image(
    api: ApiClient, services: ApiServices, compute: Recorder, active: str
) -> None:
    resp = _action(api, active, {"rescue": {"rescue_image_ref": DEFAULT_IMAGE.id}})
    assert resp.status_code == 200, resp.text
    assert compute.calls[0][1]["rescue_image_ref"] == DEFAULT_IMAGE.id
    _set(services, active, task_state=None)
    _error(_action(api, active, {"rescue": {"rescue_image_ref": MISSING}}), 400,
           f"Requested rescue image '{MISSING}' is not supported")  # fmt: skip
    snapshot = dataclasses.replace(
        DEFAULT_IMAGE, id=STABLE_IMAGE, name="snap", properties={"img_block_device_mapping": "[]"}
    )
    image_service(services).add(snapshot)  # type: ignore[attr-defined]
    _error(_action(api, active, {"rescue": {"rescue_image_ref": STABLE_IMAGE}}), 400,
           f"Requested rescue image '{STABLE_IMAGE}' is not supported")  # fmt: skip


@pytest.mark.parametrize(
    "body",
    [
        {"rescue": {"rescue_image_ref": "not-a-uuid"}},
        {"rescue": {"adminPass": 1}},
        {"rescue": {"other": 1}},
        {"rescue": "x"},
        {"rescue": None, "extra": 1},
    ],
)
def test_rescue_body_is_validated(
    api: ApiClient, compute: Recorder, active: str, body: Any
) -> None:
    assert _action(api, active, body).status_code == 400
    assert compute.calls == []


def test_rescue_refusals(
    api: ApiClient, services: ApiServices, compute: Recorder, active: str
) -> None:
    _error(_action(api, MISSING, {"rescue": None}), 404, f"Instance {MISSING} could not be found.")
    _error(_action(api, active, {"rescue": None}, headers=READER), 403,
           "Policy doesn't allow os_compute_api:os-rescue to be performed.")  # fmt: skip
    _set(services, active, vm_state="paused")
    _error(_action(api, active, {"rescue": None}), 409,
           f"Cannot 'rescue' instance {active} while it is in vm_state paused")  # fmt: skip
    _set(services, active, vm_state="active", task_state="powering-off")
    _error(_action(api, active, {"rescue": None}), 409,
           f"Cannot 'rescue' instance {active} while it is in task_state powering-off")  # fmt: skip
    _set(services, active, task_state=None, locked=True, locked_by="owner")
    _error(_action(api, active, {"rescue": None}), 409, f"Instance {active} is locked")
    assert compute.calls == []
    assert _action(api, active, {"rescue": None}, token=ADMIN).status_code == 200


def test_rescue_of_a_vtpm_server_is_400(
    api: ApiClient, services: ApiServices, compute: Recorder, active: str
) -> None:
    sysmeta = {**_row(services, active).system_metadata, "image_hw_tpm_version": "2.0"}
    _set(services, active, system_metadata=sysmeta)
    _error(_action(api, active, {"rescue": None}), 400,
           f"Operation 'rescue' not supported for vTPM-enabled instance ({active}).")  # fmt: skip
    assert compute.calls == []


def test_volume_backed_rescue_needs_2_87_stable_image_and_host_trait(
    api: ApiClient, services: ApiServices, compute: Recorder, active: str
) -> None:
    _set(services, active, image_ref="")
    message = f"Instance {active} cannot be rescued: Cannot rescue a volume-backed instance"
    _error(_action(api, active, {"rescue": None}, version="2.87"), 400, message)
    stable = dataclasses.replace(
        DEFAULT_IMAGE,
        id=STABLE_IMAGE,
        name="rescue",
        properties={"hw_rescue_device": "disk", "hw_rescue_bus": "virtio"},
    )
    image_service(services).add(stable)  # type: ignore[attr-defined]
    body = {"rescue": {"rescue_image_ref": STABLE_IMAGE}}
    _error(_action(api, active, body, version="2.86"), 400, message)
    # 2.87 with a stable-rescue image: the host must be able to (no compute node here)
    _error(_action(api, active, body, version="2.87"), 400,
           f"Instance {active} cannot be rescued: Host unable to rescue a volume-backed instance")  # fmt: skip
    assert compute.calls == []


class TraitsPlacement:
    """Placement as far as the rescue check reads it: the traits of one provider."""

    def __init__(self, traits: frozenset[str]) -> None:
        self.traits = traits
        self.asked: list[str] = []

    def get_traits(self, uuid: str) -> frozenset[str]:
        self.asked.append(uuid)
        return self.traits


def test_volume_backed_stable_rescue_on_a_capable_host_is_cast(
    api: ApiClient, services: ApiServices, compute: Recorder, active: str
) -> None:
    _set(services, active, image_ref="")
    with services.cell_dbs[CELL1_UUID].begin() as conn:
        node = compute_nodes.create_compute_node(conn, "host1", "host1")
    placement = TraitsPlacement(frozenset({"COMPUTE_NODE", "COMPUTE_RESCUE_BFV"}))
    services.placement = placement  # type: ignore[assignment]
    stable = dataclasses.replace(
        DEFAULT_IMAGE,
        id=STABLE_IMAGE,
        name="rescue",
        properties={"hw_rescue_device": "disk", "hw_rescue_bus": "virtio"},
    )
    image_service(services).add(stable)  # type: ignore[attr-defined]
    body = {"rescue": {"rescue_image_ref": STABLE_IMAGE}}
    resp = _action(api, active, body, version="2.87")
    assert resp.status_code == 200, resp.text
    assert placement.asked == [node.uuid]
    assert compute.calls[0][1]["rescue_image_ref"] == STABLE_IMAGE
    assert _row(services, active).task_state == "rescuing"


# --- unrescue ----------------------------------------------------------------------------


def test_unrescue_casts_and_records_the_action(
    api: ApiClient, services: ApiServices, compute: Recorder, active: str
) -> None:
    _error(_action(api, active, {"unrescue": None}), 409,
           f"Cannot 'unrescue' instance {active} while it is in vm_state active")  # fmt: skip
    _set(services, active, vm_state="rescued")
    resp = _action(api, active, {"unrescue": None})
    assert (resp.status_code, resp.content) == (202, b"")
    assert compute.names() == ["unrescue_instance"]
    assert _row(services, active).task_state == "unrescuing"
    assert _actions(services, active) == ["unrescue"]
    shown = api.get(f"/v2.1/servers/{active}", token=USER).json()["server"]
    assert shown["status"] == "RESCUE"


def test_unrescue_refusals(
    api: ApiClient, services: ApiServices, compute: Recorder, active: str
) -> None:
    _set(services, active, vm_state="rescued")
    _error(_action(api, active, {"unrescue": None}, headers=READER), 403,
           "Policy doesn't allow os_compute_api:os-unrescue to be performed.")  # fmt: skip
    _set(services, active, locked=True, locked_by="owner")
    _error(_action(api, active, {"unrescue": None}), 409, f"Instance {active} is locked")
    assert _action(api, active, {"unrescue": {"x": 1}}, token=ADMIN).status_code == 202
    assert _action(api, active, {"unrescue": None, "x": 1}).status_code == 400


# --- changePassword -----------------------------------------------------------------------


class PasswordCompute(Recorder):
    """A compute client whose set_admin_password call raises ``error`` (after recording)."""

    def __init__(self, error: Exception | None = None) -> None:
        super().__init__()
        self.error = error

    def call(self, context: Any, host: str, message: Any) -> None:
        self.calls.append((message.method, {"host": host, "message": message}))
        if self.error is not None:
            raise self.error


def test_change_password_calls_compute_and_answers_202(
    api: ApiClient, services: ApiServices, active: str
) -> None:
    compute = PasswordCompute()
    services.compute = compute  # type: ignore[assignment]
    resp = _action(api, active, {"changePassword": {"adminPass": "n3w"}})
    assert (resp.status_code, resp.content) == (202, b"")
    ((name, call),) = compute.calls
    assert (name, call["host"], call["message"].new_pass) == ("set_admin_password", "host1", "n3w")
    # the host clears the task; with the stand-in it stays as the API set it
    assert _row(services, active).task_state == "updating_password"
    assert _actions(services, active) == ["changePassword"]


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (Conflict("Guest agent is not enabled for the instance"), 409),
        (NotImplementedYet("Unable to set password on instance"), 501),
    ],
)
def test_change_password_answers_the_hosts_refusal(
    api: ApiClient, services: ApiServices, active: str, error: Exception, status: int
) -> None:
    services.compute = PasswordCompute(error)  # type: ignore[assignment]
    _error(_action(api, active, {"changePassword": {"adminPass": "x"}}), status, str(error))


def test_change_password_refusals(
    api: ApiClient, services: ApiServices, compute: Recorder, active: str
) -> None:
    body = {"changePassword": {"adminPass": "x"}}
    _error(_action(api, MISSING, body), 404, f"Instance {MISSING} could not be found.")
    _error(_action(api, active, body, headers=READER), 403,
           "Policy doesn't allow os_compute_api:os-admin-password to be performed.")  # fmt: skip
    for bad in ({"changePassword": {}}, {"changePassword": None},
                {"changePassword": {"adminPass": "x", "y": 1}}, {"changePassword": {"adminPass": 1}}):  # fmt: skip
        assert _action(api, active, bad).status_code == 400, bad
    _set(services, active, vm_state="stopped")
    _error(_action(api, active, body), 409,
           f"Cannot 'changePassword' instance {active} while it is in vm_state stopped")  # fmt: skip
    _set(services, active, vm_state="active", locked=True, locked_by="owner")
    _error(_action(api, active, body), 409, f"Instance {active} is locked")
    assert compute.calls == []


# --- trigger_crash_dump --------------------------------------------------------------------


@pytest.mark.parametrize("state", ["active", "paused", "rescued", "resized", "error"])
def test_trigger_crash_dump_casts_without_changing_state(
    api: ApiClient, services: ApiServices, compute: Recorder, active: str, state: str
) -> None:
    _set(services, active, vm_state=state)
    resp = _action(api, active, {"trigger_crash_dump": None}, version="2.17")
    assert (resp.status_code, resp.content) == (202, b"")
    assert compute.names() == ["trigger_crash_dump"]
    row = _row(services, active)
    assert (row.vm_state, row.task_state) == (state, None)
    assert _actions(services, active) == ["trigger_crash_dump"]


def test_trigger_crash_dump_refusals(
    api: ApiClient, services: ApiServices, compute: Recorder, active: str
) -> None:
    body = {"trigger_crash_dump": None}
    assert _action(api, active, body, version="2.16").status_code == 404  # as Nova's
    assert _action(api, active, {"trigger_crash_dump": {}}, version="2.17").status_code == 400
    _error(_action(api, active, body, version="2.17", headers=READER), 403,
           "Policy doesn't allow os_compute_api:servers:trigger_crash_dump to be performed.")  # fmt: skip
    _set(services, active, vm_state="stopped")
    _error(_action(api, active, body, version="2.17"), 409,
           f"Cannot 'trigger_crash_dump' instance {active} while it is in vm_state stopped")  # fmt: skip
    _set(services, active, vm_state="active", host=None)
    _error(_action(api, active, body, version="2.17"), 409, f"Instance {active} is not ready")
    _set(services, active, host="host1", locked=True, locked_by="owner")
    _error(_action(api, active, body, version="2.17"), 409, f"Instance {active} is locked")
    assert compute.calls == []
