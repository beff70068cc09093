"""Diagnostics, host uptime and external events across the API and the compute role (RPC
calls and a cast), on both transports: the driver's answers in Nova's documents, Nova's 409
for a guest that is not running, the events delivered to a waiting operation and a
power-update recorded from the driver's power state."""

from __future__ import annotations

import time
from typing import Any

from openkeel.virt.model import InstanceRef
from tests.functional.conftest import Cloud

EVENTS = "/v2.1/os-server-external-events"


def _diag(cloud: Cloud, sid: str, version: str) -> Any:
    return cloud.api.get(f"/v2.1/servers/{sid}/diagnostics", version=version)


def test_diagnostics_through_the_compute_host(cloud: Cloud) -> None:
    (service,) = cloud.computes.values()
    sid = cloud.boot("diag")["id"]
    assert cloud.wait(sid)["status"] == "ACTIVE"
    legacy = _diag(cloud, sid, "2.1")
    assert legacy.status_code == 200, legacy.text
    assert legacy.json()["memory"] == 512 * 1024 and "cpu0_time" in legacy.json()
    standard = _diag(cloud, sid, "2.48").json()
    assert (standard["state"], standard["driver"], standard["num_cpus"]) == ("running", "libvirt", 1)  # fmt: skip
    assert standard["memory_details"] == {"maximum": 512, "used": 512}
    assert len(standard["disk_details"]) == standard["num_disks"] == 1
    user = cloud.api.get(f"/v2.1/servers/{sid}/diagnostics", token="demo:admin")
    assert user.status_code in (403, 404)
    service.host.driver.unsupported = frozenset({"get_instance_diagnostics"})
    assert _diag(cloud, sid, "2.48").status_code == 501
    assert _diag(cloud, sid, "2.1").status_code == 200
    assert cloud.api.post(f"/v2.1/servers/{sid}/action", {"os-stop": None}).status_code == 202
    assert cloud.wait(sid)["status"] == "SHUTOFF"
    refused = _diag(cloud, sid, "2.1")
    assert refused.status_code == 409
    assert refused.json()["conflictingRequest"]["message"] == (
        f"Cannot 'get_diagnostics' instance {sid} while it is in power state shutdown"
    )


def test_hypervisor_uptime_from_the_driver(cloud: Cloud) -> None:
    (service,) = cloud.computes.values()
    listed = cloud.api.get("/v2.1/os-hypervisors", version="2.53").json()["hypervisors"]
    (hyp,) = [h for h in listed if h["hypervisor_hostname"] == f"{service.hostname}-node"]
    uptime = cloud.api.get(f"/v2.1/os-hypervisors/{hyp['id']}/uptime", version="2.53")
    assert uptime.status_code == 200, uptime.text
    assert " up " in uptime.json()["hypervisor"]["uptime"]
    shown = cloud.api.get(f"/v2.1/os-hypervisors/{hyp['id']}", version="2.88").json()
    assert " up " in shown["hypervisor"]["uptime"]
    service.host.driver.unsupported = frozenset({"get_host_uptime"})
    refused = cloud.api.get(f"/v2.1/os-hypervisors/{hyp['id']}/uptime", version="2.53")
    assert refused.status_code == 501
    shown = cloud.api.get(f"/v2.1/os-hypervisors/{hyp['id']}", version="2.88").json()
    assert shown["hypervisor"]["uptime"] is None


def test_events_reach_the_waiting_operation(cloud: Cloud) -> None:
    (service,) = cloud.computes.values()
    sid = cloud.boot("events")["id"]
    assert cloud.wait(sid)["status"] == "ACTIVE"
    waiter = service.host.events.prepare(sid, "network-vif-plugged", "port-1")
    other = service.host.events.prepare(sid, "network-vif-plugged", "port-2")
    body = {"events": [{"name": "network-vif-plugged", "server_uuid": sid, "tag": "port-1"}]}
    resp = cloud.api.post(EVENTS, body)
    assert resp.status_code == 200, resp.text
    arrived = waiter.wait(30)
    assert (arrived.key, arrived.status) == ("network-vif-plugged-port-1", "completed")
    assert service.host.events.pending(sid) == ["network-vif-plugged-port-2"]
    failed = {"events": [{"name": "network-vif-plugged", "server_uuid": sid, "tag": "port-2", "status": "failed"}]}  # fmt: skip
    assert cloud.api.post(EVENTS, failed).status_code == 200
    assert other.wait(30).status == "failed"
    assert service.host.events.pending(sid) == []


def test_power_update_records_the_guest_power_state(cloud: Cloud) -> None:
    (service,) = cloud.computes.values()
    sid = cloud.boot("ironic-like")["id"]
    assert cloud.wait(sid)["status"] == "ACTIVE"
    driver = service.host.driver
    # The guest goes down behind Nova's back, and nothing but the event tells compute.
    driver.register_event_listener(None)
    driver.power_off(InstanceRef(sid, "unused", "admin"))
    event = {"name": "power-update", "server_uuid": sid, "tag": "POWER_OFF"}
    assert cloud.api.post(EVENTS, {"events": [event]}, version="2.75").status_code == 400
    resp = cloud.api.post(EVENTS, {"events": [event]}, version="2.76")
    assert resp.status_code == 200, resp.text
    deadline = time.monotonic() + 30
    while True:
        server = cloud.api.get(f"/v2.1/servers/{sid}", version="2.1").json()["server"]
        if server["status"] == "SHUTOFF" or time.monotonic() > deadline:
            break
        time.sleep(0.05)  # polling real asynchrony (the cast), bounded by the deadline
    assert (server["status"], server["OS-EXT-STS:power_state"]) == ("SHUTOFF", 4)
    actions = cloud.api.get(f"/v2.1/servers/{sid}/os-instance-actions").json()["instanceActions"]
    assert "stop" in [a["action"] for a in actions]
