"""``/os-hosts`` (up to 2.42; 404 from 2.43): the host list with its zone filter, one compute
host's resource rows, the host actions as calls to the host's driver (its answers, Nova's 501
when it has no such feature, 404 for unknown hosts) and the admin-only policy. Responses are
checked against Nova's and tempest's schemas by the conformance hook."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from openkeel.domain.errors import NotImplementedYet
from openkeel.rpc.messages.compute import HostMaintenanceMode, HostPowerAction, SetHostEnabled
from tests.api.test_os_services import Cloud, build_cloud
from tests.conformance import response_check

ADMIN = "admin:admin"
USER = "demo:demo"


class HostDriver:
    """A compute client whose host answers as Nova's fake driver (no maintenance window)."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, Any]] = []

    def call(self, _context: Any, host: str, message: Any) -> str:
        self.asked.append((host, message))
        if isinstance(message, SetHostEnabled):
            return "enabled" if message.enabled else "disabled"
        if isinstance(message, HostPowerAction):
            return message.action
        assert isinstance(message, HostMaintenanceMode)
        raise NotImplementedYet("The requested functionality is not supported.")


@pytest.fixture
def cloud(tmp_path: Path) -> Iterator[Cloud]:
    yield from build_cloud(tmp_path)


@pytest.fixture
def driver(cloud: Cloud) -> HostDriver:
    stub = HostDriver()
    cloud.services.compute = stub  # type: ignore[assignment]
    return stub


def _checked(resp: Any) -> Any:
    """``resp`` once Nova's (and tempest's) schemas accept it."""
    report = response_check.inspect(resp)
    assert not report.errors, report.errors
    return resp


def _get(cloud: Cloud, path: str, version: str = "2.1", token: str = ADMIN) -> Any:
    return _checked(cloud.api.get(f"/v2.1/os-hosts{path}", version=version, token=token))


def _fault(resp: Any, status: int, message: str) -> None:
    assert resp.status_code == status, resp.text
    assert next(iter(resp.json().values()))["message"] == message


def test_list_with_zone_filter(cloud: Cloud) -> None:
    cloud.compute("host1")
    cloud.compute("host2", disabled=True)
    cloud.service("ctl", "nova-scheduler")
    cloud.service("ctl", "nova-conductor")
    cloud.service("api", "nova-osapi_compute")
    listed = _get(cloud, "").json()["hosts"]
    assert sorted((h["host_name"], h["service"], h["zone"]) for h in listed) == [
        ("ctl", "conductor", "internal"), ("ctl", "scheduler", "internal"),
        ("host1", "compute", "nova"),
    ]  # fmt: skip
    only = _get(cloud, "?zone=internal&zone=nova").json()["hosts"]
    assert [h["host_name"] for h in only] == ["host1"]
    assert _get(cloud, "?zone=elsewhere").json() == {"hosts": []}
    assert _get(cloud, "?unknown=1").status_code == 200
    assert _get(cloud, "", "2.42").status_code == 200
    _fault(_get(cloud, "", "2.43"), 404, "The resource could not be found.")
    assert _get(cloud, "", token=USER).status_code == 403


def test_show_resource_rows(cloud: Cloud) -> None:
    cloud.compute("host1")
    cloud.instance("host1", project_id="p1", vcpus=2, memory_mb=512, root_gb=1, ephemeral_gb=1)
    cloud.instance("host1", project_id="p1", vcpus=1, memory_mb=256, root_gb=1, ephemeral_gb=0)
    cloud.instance("host1", project_id="p2", vcpus=1, memory_mb=128, root_gb=2, ephemeral_gb=0)
    body = _get(cloud, "/host1").json()
    rows = [(r["resource"]["project"], r["resource"]["cpu"], r["resource"]["memory_mb"], r["resource"]["disk_gb"]) for r in body["host"]]  # fmt: skip
    assert rows == [
        ("(total)", 8, 8192, 100), ("(used_now)", 0, 0, 0), ("(used_max)", 4, 896, 5),
        ("p1", 3, 768, 3), ("p2", 1, 128, 2),
    ]  # fmt: skip
    assert all(r["resource"]["host"] == "host1" for r in body["host"])
    _fault(_get(cloud, "/nowhere"), 404, "Host 'nowhere' is not mapped to any cell")
    _fault(_get(cloud, "/host1", "2.43"), 404, "The resource could not be found.")
    assert _get(cloud, "/host1", token=USER).status_code == 403


def test_update_status_and_maintenance(cloud: Cloud, driver: HostDriver) -> None:
    cloud.compute("host1")

    def put(path: str, **kw: Any) -> Any:
        return _checked(cloud.api.put(path, **kw))

    resp = put("/v2.1/os-hosts/host1", json={"status": "Disable"}, token=ADMIN)
    assert resp.status_code == 200, resp.text
    assert resp.json() == {"host": "host1", "status": "disabled"}
    assert driver.asked == [("host1", SetHostEnabled(False))]
    enabled = put("/v2.1/os-hosts/host1", json={"status": "ENABLE"}, token=ADMIN)
    assert enabled.json() == {"host": "host1", "status": "enabled"}
    _fault(
        put("/v2.1/os-hosts/host1", json={"maintenance_mode": "enable"}, token=ADMIN),
        501, "The requested functionality is not supported.",
    )  # fmt: skip
    for bad in ({}, {"status": "on"}, {"status": "enable", "other": 1}):
        assert put("/v2.1/os-hosts/host1", json=bad, token=ADMIN).status_code == 400, bad
    _fault(put("/v2.1/os-hosts/nowhere", json={"status": "enable"}, token=ADMIN), 404,
           "Host 'nowhere' is not mapped to any cell")  # fmt: skip
    assert put("/v2.1/os-hosts/host1", json={"status": "enable"}, token=USER).status_code == 403
    assert put("/v2.1/os-hosts/host1", json={"status": "enable"}, token=ADMIN, version="2.43").status_code == 404  # fmt: skip


@pytest.mark.parametrize("action", ["reboot", "shutdown", "startup"])
def test_power_actions(cloud: Cloud, driver: HostDriver, action: str) -> None:
    cloud.compute("host1")
    resp = _get(cloud, f"/host1/{action}")
    assert resp.status_code == 200, resp.text
    assert resp.json() == {"host": "host1", "power_action": action}
    assert driver.asked == [("host1", HostPowerAction(action))]
    _fault(_get(cloud, f"/nowhere/{action}"), 404, "Host 'nowhere' is not mapped to any cell")
    assert _get(cloud, f"/host1/{action}", token=USER).status_code == 403
    assert _get(cloud, f"/host1/{action}", "2.43").status_code == 404
