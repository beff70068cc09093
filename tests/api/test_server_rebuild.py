"""The rebuild action at the API tier: responses at each microversion (checked against Nova's
and tempest's schemas by the conformance hook), what is saved and what is cast."""

from __future__ import annotations

from typing import Any

import pytest

from openkeel.api.services import ApiServices
from openkeel.db.repositories import instance_actions, instances
from tests.api.server_fakes import ADMIN, IMAGE, USER, Recorder, placed_server
from tests.client import ApiClient
from tests.conftest import CELL1_UUID


@pytest.fixture
def active(api: ApiClient, services: ApiServices, roles: Any) -> str:
    return placed_server(api, services)


@pytest.mark.parametrize("version", ["2.1", "2.19", "2.26", "2.47", "2.54", "2.57", "2.63", "2.71", "2.75", "2.90", "2.96", "2.100", "2.104"])  # fmt: skip
@pytest.mark.parametrize("token", [USER, ADMIN])  # an admin sees the extended attributes
def test_rebuild_answers_the_server_at_each_microversion(
    api: ApiClient,
    services: ApiServices,
    active: str,
    roles: tuple[Recorder, Recorder],
    version: str,
    token: str,
) -> None:
    resp = api.post(f"/v2.1/servers/{active}/action", json={"rebuild": {"imageRef": IMAGE, "name": "again"}},
                    token=token, version=version)  # fmt: skip
    assert resp.status_code == 202, resp.text
    server = resp.json()["server"]
    assert (server["id"], server["name"], server["status"]) == (active, "again", "REBUILD")
    assert len(server["adminPass"]) == 12
    name, call = roles[0].calls[-1]
    assert (name, call["instance_uuid"], call["image_ref"]) == ("rebuild_instance", active, IMAGE)
    with services.cell_dbs[CELL1_UUID].connect() as conn:
        assert instances.get(conn, active).task_state == "rebuilding"
        assert [a.action for a in instance_actions.list_actions(conn, active)] == ["rebuild"]
