"""shelve, shelveOffload and unshelve at the API tier: what is saved (task, action, the shelved
image, the request spec's zone and host) and cast, and Nova's 400/403/409 at each microversion."""

from __future__ import annotations

from typing import Any

import pytest

from openkeel.api.services import ApiServices
from openkeel.clients.image import Caller
from openkeel.db.image_catalog import EmbeddedImageCatalog
from openkeel.db.repositories import instances, request_specs
from openkeel.domain.instances import InstanceUpdate
from tests.api.server_fakes import ADMIN, IMAGE, USER, Recorder, host_up, placed_server
from tests.api.test_server_snapshot import _task_and_actions
from tests.client import ApiClient
from tests.conftest import CELL1_UUID


@pytest.fixture
def active(api: ApiClient, services: ApiServices, roles: Any) -> str:
    return placed_server(api, services)


def _act(api: ApiClient, sid: str, body: Any, version: str = "2.1", token: str = USER) -> Any:
    return api.post(f"/v2.1/servers/{sid}/action", json=body, token=token, version=version)


def _set(services: ApiServices, sid: str, **changes: Any) -> None:
    with services.cell_dbs[CELL1_UUID].begin() as conn:
        instances.update(conn, sid, InstanceUpdate(**changes))


def test_shelve_registers_the_shelved_image_and_casts(
    api: ApiClient, services: ApiServices, active: str, roles: tuple[Recorder, Recorder]
) -> None:
    assert _act(api, active, {"shelve": None}).status_code == 202
    images = EmbeddedImageCatalog(services.api_db).list(Caller("admin", True), {})
    (image,) = [i for i in images if i.id != IMAGE]
    assert (image.name, image.status, image.properties["image_type"]) == ("vm-shelved", "queued", "snapshot")  # fmt: skip
    assert _task_and_actions(services, active) == ("shelving", ["shelve"])
    name, call = roles[1].calls[-1]
    assert (name, call["host"], call["image_id"]) == ("shelve_instance", "host1", image.id)


def test_shelve_of_a_volume_backed_server_offloads_directly(
    api: ApiClient, services: ApiServices, active: str, roles: tuple[Recorder, Recorder]
) -> None:
    _set(services, active, image_ref="")
    assert _act(api, active, {"shelve": None}).status_code == 202
    assert roles[1].calls[-1][0] == "shelve_offload_instance"


def test_shelve_of_a_locked_server_is_409_for_its_owner(
    api: ApiClient, services: ApiServices, active: str
) -> None:
    _set(services, active, locked=True, locked_by="admin")
    resp = _act(api, active, {"shelve": None})
    assert resp.status_code == 409
    assert resp.json()["conflictingRequest"]["message"] == f"Instance {active} is locked"


def test_shelve_offload_is_admin_only_and_needs_shelved(
    api: ApiClient, services: ApiServices, active: str, roles: tuple[Recorder, Recorder]
) -> None:
    assert _act(api, active, {"shelveOffload": None}).status_code == 403
    assert _act(api, active, {"shelveOffload": None}, token=ADMIN).status_code == 409
    _set(services, active, vm_state="shelved")
    assert _act(api, active, {"shelveOffload": None}, token=ADMIN).status_code == 202
    assert _task_and_actions(services, active) == ("shelving_offloading", ["shelveOffload"])
    assert roles[1].calls[-1][0] == "shelve_offload_instance"


@pytest.mark.parametrize(
    ("version", "body"),
    [
        ("2.77", {"unshelve": {}}),
        ("2.77", {"unshelve": {"availability_zone": None}}),
        ("2.77", {"unshelve": {"availability_zone": "nova", "host": "host1"}}),
        ("2.91", {"unshelve": {"host": None}}),
        ("2.91", {"unshelve": {"other": 1}}),
    ],
)
def test_unshelve_bodies_refused_by_schema(
    api: ApiClient, services: ApiServices, active: str, version: str, body: Any
) -> None:
    _set(services, active, vm_state="shelved_offloaded", host=None, node=None)
    assert _act(api, active, body, version=version).status_code == 400


def test_unshelve_with_a_zone_saves_it_in_the_request_spec_and_casts_the_conductor(
    api: ApiClient, services: ApiServices, active: str, roles: tuple[Recorder, Recorder]
) -> None:
    host_up(services)
    _set(services, active, vm_state="shelved_offloaded", host=None, node=None)
    resp = _act(api, active, {"unshelve": {"availability_zone": "nova"}}, version="2.77")
    assert resp.status_code == 202, resp.text
    assert _task_and_actions(services, active) == ("unshelving", ["unshelve"])
    name, call = roles[0].calls[-1]
    assert (name, call["request_spec"]["availability_zone"]) == ("unshelve_instance", "nova")
    with services.api_db.connect() as conn:
        assert request_specs.get(conn, active).availability_zone == "nova"


def test_unshelve_to_a_host_is_admin_only_and_checked(
    api: ApiClient, services: ApiServices, active: str, roles: tuple[Recorder, Recorder]
) -> None:
    host_up(services)
    _set(services, active, vm_state="shelved_offloaded", host=None, node=None)
    body = {"unshelve": {"host": "host1"}}
    assert _act(api, active, body, version="2.91").status_code == 403
    resp = _act(api, active, {"unshelve": {"host": "nohost"}}, version="2.91", token=ADMIN)
    assert resp.status_code == 400
    assert resp.json()["badRequest"]["message"] == "Compute host nohost could not be found."
    # null unpins the zone; the host's zone (the default) then does not matter
    body = {"unshelve": {"host": "host1", "availability_zone": None}}
    assert _act(api, active, body, version="2.91", token=ADMIN).status_code == 202
    _name, call = roles[0].calls[-1]
    spec = call["request_spec"]
    assert (spec["availability_zone"], spec["requested_destination"]) == (None, {"host": "host1"})


def test_unshelve_of_a_shelved_server_with_a_zone_is_409(
    api: ApiClient, services: ApiServices, active: str
) -> None:
    _set(services, active, vm_state="shelved")
    resp = _act(api, active, {"unshelve": {"availability_zone": "nova"}}, version="2.77")
    assert resp.status_code == 409
    assert "The server status must be SHELVED_OFFLOADED." in resp.json()["conflictingRequest"]["message"]  # fmt: skip
    assert _act(api, active, {"unshelve": None}, version="2.77").status_code == 202
