"""``os-getConsoleOutput`` at the API tier: a server not placed on a host yet is Nova's 409
"not ready" (the compute path is in tests/functional/test_console_output.py)."""

from __future__ import annotations

from openkeel.api.services import ApiServices
from tests.api.server_fakes import USER, create, flavor, wire
from tests.client import ApiClient


def test_server_without_a_host_is_not_ready(api: ApiClient, services: ApiServices) -> None:
    wire(services)
    flavor(api)
    sid = create(api)["server"]["id"]  # still a build request: no host
    resp = api.post(f"/v2.1/servers/{sid}/action", json={"os-getConsoleOutput": {}}, token=USER)
    assert resp.status_code == 409
    assert resp.json()["conflictingRequest"]["message"] == f"Instance {sid} is not ready"
