"""``/os-hypervisors`` over a migrated cell DB: views per microversion window, paging,
hostname search, servers, statistics, uptime, policies and errors."""

from __future__ import annotations

import datetime
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from openkeel.db.repositories import compute_nodes as nodes_repo
from openkeel.db.schema import cell as cell_tables
from openkeel.domain.errors import NotImplementedYet
from openkeel.rpc.messages.compute import GetHostUptime
from tests.api.test_os_services import Cloud, build_cloud

ADMIN = "admin:admin"


@pytest.fixture
def cloud(tmp_path: Path) -> Iterator[Cloud]:
    yield from build_cloud(tmp_path)


def _get(cloud: Cloud, path: str, version: str | None = None) -> Any:
    return cloud.api.get(f"/v2.1/os-hypervisors{path}", version=version, token=ADMIN)


def _fault(resp: Any, status: int, message: str) -> None:
    assert resp.status_code == status, resp.text
    assert next(iter(resp.json().values()))["message"] == message


def test_index_ids_per_microversion(cloud: Cloud) -> None:
    _svc, cn = cloud.compute("host1", disabled=True)
    assert _get(cloud, "").json() == {"hypervisors": [
        {"id": cn.id, "hypervisor_hostname": "host1", "state": "up", "status": "disabled"}]}  # fmt: skip
    assert _get(cloud, "", "2.53").json() == {"hypervisors": [
        {"id": cn.uuid, "hypervisor_hostname": "host1", "state": "up", "status": "disabled"}]}  # fmt: skip


def test_detail_windows(cloud: Cloud) -> None:
    svc, cn = cloud.compute("host1", disabled_reason="why")
    v21 = _get(cloud, "/detail").json()["hypervisors"][0]
    assert v21 == {
        "id": cn.id, "hypervisor_hostname": "host1", "state": "up", "status": "enabled",
        "hypervisor_type": "fake", "hypervisor_version": 1000, "host_ip": "192.168.1.135",
        "service": {"id": svc.id, "host": "host1", "disabled_reason": "why"},
        "vcpus": 8, "memory_mb": 8192, "local_gb": 100, "vcpus_used": 0, "memory_mb_used": 0,
        "local_gb_used": 0, "free_ram_mb": 7680, "free_disk_gb": 100, "current_workload": 0,
        "running_vms": 0, "disk_available_least": 90, "cpu_info": "{}",
    }  # fmt: skip
    assert _get(cloud, "/detail", "2.28").json()["hypervisors"][0]["cpu_info"] == {}
    v253 = _get(cloud, "/detail", "2.53").json()["hypervisors"][0]
    assert (v253["id"], v253["service"]["id"]) == (cn.uuid, svc.uuid)
    v288 = _get(cloud, "/detail", "2.88").json()["hypervisors"][0]
    assert sorted(v288) == ["host_ip", "hypervisor_hostname", "hypervisor_type",
                            "hypervisor_version", "id", "service", "state", "status", "uptime"]  # fmt: skip
    assert v288["uptime"] is None


def test_show(cloud: Cloud) -> None:
    svc, cn = cloud.compute("host1")
    body = _get(cloud, f"/{cn.id}").json()["hypervisor"]
    assert (body["id"], body["vcpus"], body["service"]["id"]) == (cn.id, 8, svc.id)
    body = _get(cloud, f"/{cn.uuid}", "2.88").json()["hypervisor"]
    assert (body["id"], body["uptime"]) == (cn.uuid, None)
    _fault(_get(cloud, "/abc"), 404, "Hypervisor with ID 'abc' could not be found.")
    _fault(_get(cloud, "/99"), 404, "Hypervisor with ID '99' could not be found.")
    _fault(_get(cloud, "/99", "2.53"), 400, "Invalid uuid 99")
    missing = "b1e43b5f-eec1-44e0-9f10-7b4945c0226d"
    _fault(
        _get(cloud, f"/{missing}", "2.53"),
        404,
        f"Hypervisor with ID '{missing}' could not be found.",
    )


def test_show_unmapped_host_is_not_found(cloud: Cloud) -> None:
    svc = cloud.service("lonely", "nova-compute")
    with cloud.cell.begin() as conn:
        cn = nodes_repo.create_compute_node(conn, "lonely", "lonely", service_id=svc.id)
    _fault(_get(cloud, f"/{cn.id}"), 404, f"Hypervisor with ID '{cn.id}' could not be found.")
    assert _get(cloud, "").json() == {"hypervisors": []}


def test_with_servers(cloud: Cloud) -> None:
    _, cn = cloud.compute("host1")
    _, _cn2 = cloud.compute("host2")
    first = cloud.instance("host1", "a")
    servers = _get(cloud, "?with_servers=true", "2.53").json()["hypervisors"]
    assert [h.get("servers") for h in servers] == [
        [{"name": "instance-00000001", "uuid": first}],
        None,
    ]
    servers = _get(cloud, "?with_servers=1", "2.75").json()["hypervisors"]
    assert servers[1]["servers"] == []
    shown = _get(cloud, f"/{cn.uuid}?with_servers=yes", "2.53").json()["hypervisor"]
    assert shown["servers"] == [{"name": "instance-00000001", "uuid": first}]
    resp = _get(cloud, "?with_servers=maybe", "2.53")
    assert resp.status_code == 400
    resp = _get(cloud, "?foo=1", "2.53")
    assert resp.status_code == 400
    assert _get(cloud, "?foo=1", "2.52").status_code == 200


def test_hostname_pattern(cloud: Cloud) -> None:
    cloud.compute("host1", "fake-mini")
    cloud.compute("host2", "other")
    found = _get(cloud, "?hypervisor_hostname_pattern=mini", "2.53").json()
    assert [h["hypervisor_hostname"] for h in found["hypervisors"]] == ["fake-mini"]
    assert "hypervisors_links" not in found
    _fault(_get(cloud, "?hypervisor_hostname_pattern=zzz", "2.53"), 404,
           "No hypervisor matching 'zzz' could be found.")  # fmt: skip
    _fault(_get(cloud, "/detail?hypervisor_hostname_pattern=mini&limit=1", "2.53"), 400,
           "Paging over hypervisors with the hypervisor_hostname_pattern query parameter is not supported.")  # fmt: skip


def test_paging_from_233(cloud: Cloud) -> None:
    nodes = [cloud.compute(f"host{i}")[1] for i in range(3)]
    page = _get(cloud, "?limit=2", "2.33").json()
    assert [h["id"] for h in page["hypervisors"]] == [nodes[0].id, nodes[1].id]
    assert page["hypervisors_links"] == [{"rel": "next", "href":
        f"http://openkeel.test/v2.1/os-hypervisors?limit=2&marker={nodes[1].id}"}]  # fmt: skip
    page = _get(cloud, f"/detail?limit=2&marker={nodes[1].id}", "2.33").json()
    assert [h["id"] for h in page["hypervisors"]] == [nodes[2].id]
    assert "hypervisors_links" not in page
    page = _get(cloud, f"?marker={nodes[0].uuid}", "2.53").json()
    assert [h["id"] for h in page["hypervisors"]] == [nodes[1].uuid, nodes[2].uuid]
    _fault(_get(cloud, "?marker=nope", "2.53"), 400, "marker [nope] not found")
    assert _get(cloud, "?limit=1", "2.32").json() == _get(cloud, "", "2.1").json()
    assert _get(cloud, "?limit=-1", "2.33").status_code == 400


def test_statistics(cloud: Cloud) -> None:
    cloud.compute("host1")
    cloud.compute("host2")
    cloud.compute("host3", disabled=True)
    stats = _get(cloud, "/statistics").json()["hypervisor_statistics"]
    assert stats == {"count": 2, "vcpus": 16, "memory_mb": 16384, "local_gb": 200,
                     "vcpus_used": 0, "memory_mb_used": 0, "local_gb_used": 0,
                     "free_ram_mb": 15360, "free_disk_gb": 200, "current_workload": 0,
                     "running_vms": 0, "disk_available_least": 180}  # fmt: skip
    assert _get(cloud, "/statistics", "2.87").status_code == 200
    assert _get(cloud, "/statistics", "2.88").status_code == 404


class UptimeHosts:
    """A compute client whose hosts answer get_host_uptime (None: the driver cannot tell)."""

    def __init__(self, answers: dict[str, str | None]) -> None:
        self.answers = answers
        self.asked: list[str] = []

    def call(self, _context: Any, host: str, message: Any) -> str:
        assert isinstance(message, GetHostUptime)
        self.asked.append(host)
        answer = self.answers[host]
        if answer is None:
            raise NotImplementedYet("The requested functionality is not supported.")
        return answer


def test_uptime(cloud: Cloud) -> None:
    _, cn = cloud.compute("host1", "node1")
    # No compute host reachable from this API process: nothing can tell.
    _fault(_get(cloud, f"/{cn.id}/uptime"), 501, "The requested functionality is not supported.")
    hosts = UptimeHosts({"host1": " 10:00:00 up 2 days, 3:04"})
    cloud.services.compute = hosts  # type: ignore[assignment]
    body = _get(cloud, f"/{cn.uuid}/uptime", "2.53").json()
    assert body == {"hypervisor": {"id": cn.uuid, "hypervisor_hostname": "node1", "state": "up",
                                   "status": "enabled", "uptime": " 10:00:00 up 2 days, 3:04"}}  # fmt: skip
    assert _get(cloud, f"/{cn.uuid}", "2.88").json()["hypervisor"]["uptime"] == " 10:00:00 up 2 days, 3:04"  # fmt: skip
    assert _get(cloud, "/detail", "2.88").json()["hypervisors"][0]["uptime"] == " 10:00:00 up 2 days, 3:04"  # fmt: skip
    # The node's stats, when they carry an uptime, win in the 2.88 view (as in Nova).
    with cloud.cell.begin() as conn:
        conn.execute(
            sa.update(cell_tables.compute_nodes).values(stats=json.dumps({"uptime": "up 1 day"}))
        )
    assert _get(cloud, f"/{cn.uuid}", "2.88").json()["hypervisor"]["uptime"] == "up 1 day"
    hosts.answers["host1"] = None
    _fault(_get(cloud, f"/{cn.id}/uptime"), 501, "The requested functionality is not supported.")
    assert _get(cloud, f"/{cn.uuid}/uptime", "2.88").status_code == 404
    old = datetime.datetime(2000, 1, 1)
    _, cn2 = cloud.compute("host2", last_seen_up=old, created_at=old)
    _fault(
        _get(cloud, f"/{cn2.id}/uptime"),
        400,
        "Compute service of host2 is unavailable at this time.",
    )
    # A down host is not asked; its 2.88 uptime is null.
    asked = len(hosts.asked)
    assert _get(cloud, f"/{cn2.uuid}", "2.88").json()["hypervisor"]["uptime"] is None
    assert len(hosts.asked) == asked


def test_search_and_servers_until_252(cloud: Cloud) -> None:
    _, cn = cloud.compute("host1", "fake-mini")
    server = cloud.instance("host1")
    found = _get(cloud, "/mini/search").json()
    assert found == {"hypervisors": [{"id": cn.id, "hypervisor_hostname": "fake-mini",
                                      "state": "up", "status": "enabled"}]}  # fmt: skip
    with_servers = _get(cloud, "/mini/servers", "2.52").json()["hypervisors"][0]
    assert with_servers["servers"] == [{"name": "instance-00000001", "uuid": server}]
    _fault(_get(cloud, "/zzz/search"), 404, "No hypervisor matching 'zzz' could be found.")
    _fault(_get(cloud, "/zzz/servers"), 404, "No hypervisor matching 'zzz' could be found.")
    assert _get(cloud, "/mini/search", "2.53").status_code == 404


def test_policies_are_admin_only(cloud: Cloud) -> None:
    _, cn = cloud.compute("host1")
    for path, rule in (("", "list"), ("/detail", "list-detail"), ("/statistics", "statistics"),
                       (f"/{cn.id}", "show"), (f"/{cn.id}/uptime", "uptime"),
                       ("/host/search", "search"), ("/host/servers", "servers")):  # fmt: skip
        resp = cloud.api.get(f"/v2.1/os-hypervisors{path}", token="demo:demo")
        _fault(
            resp, 403, f"Policy doesn't allow os_compute_api:os-hypervisors:{rule} to be performed."
        )
