"""GET/DELETE /servers/{id}/os-server-password and GET /servers/{id}/topology (2.78): Nova's
bodies (checked against its response schemas by the API client), policies, visibility and
microversion window."""

from __future__ import annotations

import pytest

from openkeel.api.services import ApiServices
from openkeel.db.repositories import instances
from openkeel.domain.instances import InstanceUpdate
from tests.api.server_fakes import ADMIN, USER, create, flavor, place
from tests.client import ApiClient
from tests.conftest import CELL1_UUID

OTHER = "bob:other-project"
ENCRYPTED = "x" * 300  # longer than one 255-character chunk


@pytest.fixture
def server(api: ApiClient, services: ApiServices) -> str:
    flavor(api)
    sid: str = create(api)["server"]["id"]
    place(services, sid)
    return sid


def _posted(services: ApiServices, sid: str, password: str) -> None:
    """What the metadata service does when the guest posts its encrypted password."""
    chunks = {f"password_{n}": password[n * 255 : (n + 1) * 255] for n in range(4)}
    with services.cell_dbs[CELL1_UUID].begin() as conn:
        inst = instances.get(conn, sid)
        sysmeta = {**inst.system_metadata, **chunks}
        instances.update(conn, sid, InstanceUpdate(system_metadata=sysmeta))


def test_password_is_empty_until_posted_then_shown_and_cleared(
    api: ApiClient, services: ApiServices, server: str
) -> None:
    path = f"/v2.1/servers/{server}/os-server-password"
    assert api.get(path, token=USER).json() == {"password": ""}
    _posted(services, server, ENCRYPTED)
    assert api.get(path, token=USER).json() == {"password": ENCRYPTED}
    cleared = api.delete(path, token=USER)
    assert cleared.status_code == 204 and cleared.content == b""
    assert api.get(path, token=USER).json() == {"password": ""}


def test_password_of_another_project_is_not_found(api: ApiClient, server: str) -> None:
    path = f"/v2.1/servers/{server}/os-server-password"
    for resp in (api.get(path, token=OTHER), api.delete(path, token=OTHER)):
        assert resp.status_code == 404
        assert resp.json()["itemNotFound"]["message"] == f"Instance {server} could not be found."
    assert api.get(path, token=ADMIN).status_code == 200


def test_password_query_is_strict_from_2_102(api: ApiClient, server: str) -> None:
    path = f"/v2.1/servers/{server}/os-server-password?foo=1"
    assert api.get(path, token=USER, version="2.101").status_code == 200
    assert api.get(path, token=USER, version="2.102").status_code == 400


def test_topology_from_2_78_without_numa_is_empty(api: ApiClient, server: str) -> None:
    path = f"/v2.1/servers/{server}/topology"
    assert api.get(path, token=USER, version="2.77").status_code == 404
    for token in (USER, ADMIN):
        resp = api.get(path, token=token, version="2.78")
        assert resp.status_code == 200
        assert resp.json() == {"nodes": [], "pagesize_kb": None}
    assert api.get(path, token=OTHER, version="2.78").status_code == 404
