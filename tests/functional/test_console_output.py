"""``os-getConsoleOutput`` across the API and the compute role (an RPC call), on both
transports: the log, its last lines, Nova's errors (404 other project, 400 bad length, 501 a
driver without consoles; 409 for a server without a host is in tests/api)."""

from __future__ import annotations

from typing import Any

from tests.functional.conftest import Cloud


def _output(cloud: Cloud, sid: str, body: Any, token: str = "admin:admin") -> Any:
    return cloud.api.post(f"/v2.1/servers/{sid}/action", {"os-getConsoleOutput": body}, token=token)


def test_console_output_and_its_tail(cloud: Cloud) -> None:
    (service,) = cloud.computes.values()
    sid = cloud.boot("console")["id"]
    assert cloud.wait(sid)["status"] == "ACTIVE"
    full = _output(cloud, sid, {})
    assert full.status_code == 200, full.text
    assert full.json()["output"].startswith("FAKE CONSOLE OUTPUT\n")
    lines = full.json()["output"].split("\n")
    assert "login:" in lines and len(lines) > 3  # the guest's boot log (tempest wants > 3)
    assert _output(cloud, sid, {"length": 2}).json() == {"output": "\n".join(lines[-2:])}
    assert _output(cloud, sid, {"length": "0"}).json() == {"output": ""}
    assert _output(cloud, sid, {"length": None}).json() == full.json()
    assert _output(cloud, sid, {"length": -2}).status_code == 400
    assert _output(cloud, sid, {"length": "x"}).status_code == 400
    other = _output(cloud, sid, {}, token="bob:other")
    assert other.status_code == 404
    service.host.driver.unsupported = frozenset({"get_console_output"})
    refused = _output(cloud, sid, {})
    assert refused.status_code == 501
    assert refused.json()["notImplemented"]["message"] == (
        "The requested functionality is not supported."
    )
