"""GET /servers/{id}/diagnostics: admin-only, a call to the server's host, the driver's mapping
before 2.48 and Nova's standard document from 2.48 (responses checked against Nova's schemas
by the conformance hook); 409 for a server without a host, errors of the host as themselves."""

from __future__ import annotations

from typing import Any

import pytest

from openkeel.api.services import ApiServices
from openkeel.domain.states import InstanceInvalidState
from openkeel.rpc.messages.compute import GetDiagnostics, GetInstanceDiagnostics
from tests.api.server_fakes import ADMIN, USER, create, flavor, placed_server
from tests.client import ApiClient

LEGACY = {"cpu0_time": 17300000000, "memory": 524288, "vda_read": 262144}
STANDARD = {
    "state": "running", "driver": "libvirt", "hypervisor": "kvm", "hypervisor_os": "linux",
    "uptime": 46, "config_drive": False, "num_cpus": 1, "num_nics": 1, "num_disks": 1,
    "memory_mb": 512, "memory_used_mb": None,
    "cpu_details": [{"id": 0, "time": None, "utilisation": None}],
    "nic_details": [{"mac_address": "fa:16:3e:00:00:01", "rx_octets": None, "rx_errors": None,
                     "rx_drop": None, "rx_packets": None, "rx_rate": None, "tx_octets": None,
                     "tx_errors": None, "tx_drop": None, "tx_packets": None, "tx_rate": None}],
    "disk_details": [{"read_bytes": None, "read_requests": None, "write_bytes": None,
                      "write_requests": None, "errors_count": None}],
}  # fmt: skip


class DiagnosingHost:
    """A compute client answering the two diagnostics calls (or raising ``error``)."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, Any]] = []
        self.error: Exception | None = None

    def call(self, _context: Any, host: str, message: Any) -> Any:
        self.asked.append((host, message))
        if self.error is not None:
            raise self.error
        if isinstance(message, GetInstanceDiagnostics):
            return STANDARD
        assert isinstance(message, GetDiagnostics)
        return LEGACY


@pytest.fixture
def host(services: ApiServices) -> DiagnosingHost:
    stub = DiagnosingHost()
    services.compute = stub  # type: ignore[assignment]
    return stub


def _diag(api: ApiClient, sid: str, version: str = "2.1", token: str = ADMIN) -> Any:
    return api.get(f"/v2.1/servers/{sid}/diagnostics", token=token, version=version)


@pytest.mark.parametrize("version", ["2.1", "2.47"])
def test_driver_mapping_before_2_48(api: ApiClient, services: ApiServices, host: DiagnosingHost, version: str) -> None:  # fmt: skip
    sid = placed_server(api, services)
    resp = _diag(api, sid, version)
    assert resp.status_code == 200, resp.text
    assert resp.json() == LEGACY
    assert host.asked == [("host1", GetDiagnostics(sid))]


@pytest.mark.parametrize("version", ["2.48", "2.102", "latest"])
def test_standard_document_from_2_48(api: ApiClient, services: ApiServices, host: DiagnosingHost, version: str) -> None:  # fmt: skip
    sid = placed_server(api, services)
    resp = _diag(api, sid, version)
    assert resp.status_code == 200, resp.text
    body = resp.json()
    assert body["memory_details"] == {"maximum": 512, "used": None}
    assert (body["state"], body["driver"], body["uptime"], body["num_nics"]) == ("running", "libvirt", 46, 1)  # fmt: skip
    assert body["nic_details"] == STANDARD["nic_details"]
    assert "memory_mb" not in body
    assert host.asked == [("host1", GetInstanceDiagnostics(sid))]


def test_policy_state_and_errors(api: ApiClient, services: ApiServices, host: DiagnosingHost) -> None:  # fmt: skip
    sid = placed_server(api, services)
    forbidden = _diag(api, sid, token=USER)
    assert forbidden.status_code == 403
    assert _diag(api, "9a7e1b4c-0000-4000-8000-000000000000").status_code == 404
    host.error = InstanceInvalidState("get_diagnostics", sid, "power state", "shutdown")
    refused = _diag(api, sid, "2.48")
    assert refused.status_code == 409
    assert refused.json()["conflictingRequest"]["message"] == (
        f"Cannot 'get_diagnostics' instance {sid} while it is in power state shutdown"
    )
    assert _diag(api, sid, "2.102").status_code == 409
    strict = api.get(f"/v2.1/servers/{sid}/diagnostics?x=1", token=ADMIN, version="2.102")
    assert strict.status_code == 400
    # Not scheduled yet: Nova's InstanceNotReady.
    flavor(api, "2")
    pending = create(api, flavorRef="2")["server"]["id"]
    not_ready = _diag(api, pending)
    assert not_ready.status_code == 409, not_ready.text
    assert not_ready.json()["conflictingRequest"]["message"] == f"Instance {pending} is not ready"
