"""rescue / unrescue, changePassword and trigger_crash_dump across every role, on both
transports: the API checks and casts (or calls), compute drives the fake hypervisor, the
server ends as Nova's does; driver failures leave Nova's states and faults."""

from __future__ import annotations

import time
import uuid
from typing import Any

from openkeel.compute import guest
from openkeel.virt.errors import NotSupported, PermanentDriverError
from tests.functional.conftest import Cloud, Gate


def _action(cloud: Cloud, sid: str, body: dict[str, Any], version: str = "2.1") -> Any:
    return cloud.api.post(f"/v2.1/servers/{sid}/action", body, version=version)


def _finished(cloud: Cloud, sid: str, action: str) -> dict[str, Any]:
    """The events of ``action`` once one was recorded and all finished (an action that
    changes no task state leaves nothing else to wait for)."""
    deadline = time.monotonic() + 30
    while True:
        events = cloud.events(sid, action)
        if events or time.monotonic() > deadline:
            return events
        time.sleep(0.05)  # polling real asynchrony (RPC casts), bounded by the deadline


def _active(cloud: Cloud, name: str) -> str:
    sid: str = cloud.boot(name)["id"]
    assert cloud.wait(sid)["status"] == "ACTIVE"
    return sid


def test_rescue_and_unrescue(cloud: Cloud) -> None:
    sid = _active(cloud, "rs-1")
    (service,) = cloud.computes.values()
    resp = _action(cloud, sid, {"rescue": {"adminPass": "rescue-pw"}})
    assert (resp.status_code, resp.json()) == (200, {"adminPass": "rescue-pw"})
    server = cloud.wait(sid)
    assert (server["status"], server["OS-EXT-STS:vm_state"]) == ("RESCUE", "rescued")
    assert server["OS-EXT-STS:power_state"] == 1
    assert cloud.events(sid, "rescue") == {"compute_rescue_instance": "Success"}
    driver: Any = service.host.driver
    assert all(driver.is_rescued(r) for r in _refs(service, sid))  # boots the rescue image
    # a rescued server refuses what Nova refuses, and accepts a crash dump
    resp = _action(cloud, sid, {"os-stop": None})
    assert resp.status_code == 409, resp.text
    assert _action(cloud, sid, {"trigger_crash_dump": None}, "2.17").status_code == 202
    assert _finished(cloud, sid, "trigger_crash_dump") == {"compute_trigger_crash_dump": "Success"}
    assert _action(cloud, sid, {"unrescue": None}).status_code == 202
    server = cloud.wait(sid)
    assert (server["status"], server["OS-EXT-STS:power_state"]) == ("ACTIVE", 1)
    assert cloud.events(sid, "unrescue") == {"compute_unrescue_instance": "Success"}
    assert not any(driver.is_rescued(r) for r in _refs(service, sid))


def _refs(service: Any, sid: str) -> list[Any]:
    instance = service.host.records.get(sid)
    return [guest.instance_ref(service.host.conf, instance)]


def test_rescue_of_a_stopped_server_then_unrescue_is_active(cloud: Cloud) -> None:
    sid = _active(cloud, "rs-2")
    assert _action(cloud, sid, {"os-stop": None}).status_code == 202
    assert cloud.wait(sid)["status"] == "SHUTOFF"
    assert _action(cloud, sid, {"rescue": None}).status_code == 200
    assert cloud.wait(sid)["status"] == "RESCUE"
    assert _action(cloud, sid, {"unrescue": None}).status_code == 202
    assert cloud.wait(sid)["status"] == "ACTIVE"


def test_failed_rescue_is_error_with_fault(cloud: Cloud) -> None:
    sid = _active(cloud, "rs-3")
    (service,) = cloud.computes.values()

    def broken(*_a: Any) -> None:
        raise PermanentDriverError("rescue image unreadable")

    service.host.driver.rescue = broken  # type: ignore[method-assign, assignment]
    assert _action(cloud, sid, {"rescue": None}).status_code == 200
    server = cloud.wait(sid)
    assert server["status"] == "ERROR"
    assert server["fault"]["message"] == (
        f"Instance {sid} cannot be rescued: Driver Error: rescue image unreadable"
    )
    assert cloud.events(sid, "rescue") == {"compute_rescue_instance": "Error"}


def test_change_password(cloud: Cloud) -> None:
    sid = _active(cloud, "pw-1")
    (service,) = cloud.computes.values()
    resp = _action(cloud, sid, {"changePassword": {"adminPass": "n3w-pw"}})
    assert (resp.status_code, resp.content) == (202, b"")
    server = cloud.wait(sid)  # the call returned: the task is already cleared
    assert (server["status"], server["OS-EXT-STS:task_state"]) == ("ACTIVE", None)
    assert cloud.events(sid, "changePassword") == {"compute_set_admin_password": "Success"}
    (ref,) = _refs(service, sid)
    assert "admin password changed" in service.host.driver.get_console_output(ref)


def test_change_password_when_the_driver_cannot(cloud: Cloud) -> None:
    sid = _active(cloud, "pw-2")
    (service,) = cloud.computes.values()

    def unsupported(*_a: Any) -> None:
        raise NotSupported("set_admin_password", "kubevirt")

    service.host.driver.set_admin_password = unsupported  # type: ignore[method-assign, assignment]
    resp = _action(cloud, sid, {"changePassword": {"adminPass": "x"}})
    assert resp.status_code == 501, resp.text
    assert resp.json()["notImplemented"]["message"] == "Unable to set password on instance"
    server = cloud.wait(sid)
    assert (server["status"], server["OS-EXT-STS:task_state"]) == ("ACTIVE", None)
    assert cloud.events(sid, "changePassword") == {"compute_set_admin_password": "Error"}
    # a stopped server: 409 from the API, nothing sent
    assert _action(cloud, sid, {"os-stop": None}).status_code == 202
    assert cloud.wait(sid)["status"] == "SHUTOFF"
    resp = _action(cloud, sid, {"changePassword": {"adminPass": "x"}})
    assert resp.status_code == 409
    assert resp.json()["conflictingRequest"]["message"] == (
        f"Cannot 'changePassword' instance {sid} while it is in vm_state stopped"
    )


def test_trigger_crash_dump_unsupported_is_accepted_then_faulted(cloud: Cloud) -> None:
    sid = _active(cloud, "cd-1")
    (service,) = cloud.computes.values()

    def unsupported(*_a: Any) -> None:
        raise NotSupported("trigger_crash_dump", "kubevirt")

    service.host.driver.trigger_crash_dump = unsupported  # type: ignore[method-assign, assignment]
    assert _action(cloud, sid, {"trigger_crash_dump": None}, "2.17").status_code == 202
    assert _finished(cloud, sid, "trigger_crash_dump") == {"compute_trigger_crash_dump": "Error"}
    server = cloud.wait(sid)
    assert (server["status"], server["OS-EXT-STS:task_state"]) == ("ACTIVE", None)


def test_compute_killed_mid_rescue_leaves_nothing_in_transition(cloud: Cloud) -> None:
    """kill -9 of the compute role while the driver rescues: on restart the task is settled
    (Nova would leave ``rescuing`` for good) and the server can be rescued again."""
    gate = Gate()
    cloud.gates.append(gate)
    (other,) = cloud.computes
    _disable(cloud, other)
    host = f"rescuer-{uuid.uuid4().hex[:6]}"  # Placement outlives the test: unique names
    stuck = cloud.add_compute(host, delays={"rescue": 1.0}, sleep=gate.sleep)
    sid = _active(cloud, "rs-kill")
    assert _action(cloud, sid, {"rescue": None}).status_code == 200
    assert gate.entered.wait(30), "the rescue never reached the driver"
    cloud.computes.pop(host)
    stuck.stop(drain=False)  # the compute role dies mid-rescue
    cloud.roles.computes.remove(stuck)
    shown = cloud.api.get(f"/v2.1/servers/{sid}").json()["server"]
    assert shown["OS-EXT-STS:task_state"] == "rescuing"

    cloud.add_compute(host)  # restarted on the same host: reconciles on start
    settled = cloud.wait(sid)
    assert settled["OS-EXT-STS:task_state"] is None
    assert settled["status"] in ("ACTIVE", "SHUTOFF"), settled["status"]
    # the restarted simulated hypervisor lost the guest: stop and start define it again
    if settled["status"] == "ACTIVE":
        assert _action(cloud, sid, {"os-stop": None}).status_code == 202
        assert cloud.wait(sid)["status"] == "SHUTOFF"
    assert _action(cloud, sid, {"os-start": None}).status_code == 202
    assert cloud.wait(sid)["status"] == "ACTIVE"
    assert _action(cloud, sid, {"rescue": None}).status_code == 200
    assert cloud.wait(sid)["status"] == "RESCUE"
    gate.release()


def _disable(cloud: Cloud, host: str) -> None:
    listed = cloud.api.get(f"/v2.1/os-services?host={host}", version="2.53").json()
    service_id = listed["services"][0]["id"]
    body = {"status": "disabled", "disabled_reason": "out of the way"}
    assert cloud.api.put(f"/v2.1/os-services/{service_id}", body, version="2.53").status_code == 200
