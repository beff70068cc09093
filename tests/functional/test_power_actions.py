"""pause/unpause, suspend/resume, lock/unlock and os-resetState across every role, on both
transports: the API sets the task state and casts, compute drives the fake hypervisor and
settles vm_state and power_state, instance actions carry the compute events."""

from __future__ import annotations

from typing import Any

from openkeel.virt.errors import PermanentDriverError
from tests.functional.conftest import IMAGE, Cloud

MEMBER = "demo:demo"


def _act(cloud: Cloud, sid: str, body: Any, token: str = "admin:admin", **kw: Any) -> Any:
    return cloud.api.post(f"/v2.1/servers/{sid}/action", body, token=token, **kw)


def _events(cloud: Cloud, sid: str, action: str) -> dict[str, str]:
    return cloud.events(sid, action)


def _state(server: dict[str, Any]) -> tuple[str, str, int]:
    return server["status"], server["OS-EXT-STS:vm_state"], server["OS-EXT-STS:power_state"]


def test_pause_unpause(cloud: Cloud) -> None:
    sid = cloud.boot("p-1")["id"]
    assert cloud.wait(sid)["status"] == "ACTIVE"
    assert _act(cloud, sid, {"pause": None}).status_code == 202
    assert _state(cloud.wait(sid)) == ("PAUSED", "paused", 3)
    assert _events(cloud, sid, "pause") == {"compute_pause_instance": "Success"}
    resp = _act(cloud, sid, {"pause": None})
    assert resp.status_code == 409
    assert resp.json()["conflictingRequest"]["message"] == (
        f"Cannot 'pause' instance {sid} while it is in vm_state paused"
    )
    assert _act(cloud, sid, {"unpause": None}).status_code == 202
    assert _state(cloud.wait(sid)) == ("ACTIVE", "active", 1)
    assert _events(cloud, sid, "unpause") == {"compute_unpause_instance": "Success"}


def test_suspend_resume(cloud: Cloud) -> None:
    sid = cloud.boot("s-1")["id"]
    assert cloud.wait(sid)["status"] == "ACTIVE"
    assert _act(cloud, sid, {"suspend": None}).status_code == 202
    assert _state(cloud.wait(sid)) == ("SUSPENDED", "suspended", 7)
    assert _events(cloud, sid, "suspend") == {"compute_suspend_instance": "Success"}
    assert _act(cloud, sid, {"resume": None}).status_code == 202
    assert _state(cloud.wait(sid)) == ("ACTIVE", "active", 1)
    assert _events(cloud, sid, "resume") == {"compute_resume_instance": "Success"}
    # A suspended-then-resumed server stops and deletes as usual.
    assert cloud.api.delete(f"/v2.1/servers/{sid}").status_code == 204
    cloud.wait(sid, gone=True)
    assert cloud.usage() == {}


def test_lock_blocks_member_until_admin_unlocks(cloud: Cloud) -> None:
    body = {"server": {"name": "l-1", "imageRef": IMAGE, "flavorRef": "1", "networks": "none"}}
    resp = cloud.api.post("/v2.1/servers", body, version="2.37", token=MEMBER)
    sid = resp.json()["server"]["id"]
    assert cloud.wait(sid)["status"] == "ACTIVE"
    lock = {"lock": {"locked_reason": "audit"}}
    assert _act(cloud, sid, lock, version="2.73").status_code == 202
    shown = cloud.api.get(f"/v2.1/servers/{sid}", version="2.73", token=MEMBER).json()["server"]
    assert (shown["locked"], shown["locked_reason"]) == (True, "audit")
    for resp in (
        cloud.api.delete(f"/v2.1/servers/{sid}", token=MEMBER),
        _act(cloud, sid, {"pause": None}, token=MEMBER),
        _act(cloud, sid, {"os-stop": None}, token=MEMBER),
    ):
        assert resp.status_code == 409, resp.text
        assert resp.json()["conflictingRequest"]["message"] == f"Instance {sid} is locked"
    # The admin's lock is not the owner's to lift.
    assert _act(cloud, sid, {"unlock": None}, token=MEMBER).status_code == 403
    assert _act(cloud, sid, {"unlock": None}).status_code == 202
    shown = cloud.api.get(f"/v2.1/servers/{sid}", version="2.73", token=MEMBER).json()["server"]
    assert (shown["locked"], shown["locked_reason"]) == (False, None)
    assert _events(cloud, sid, "lock") == {"api_lock": "Success"}
    assert cloud.api.delete(f"/v2.1/servers/{sid}", token=MEMBER).status_code == 204
    cloud.wait(sid, gone=True)


def test_reset_state(cloud: Cloud) -> None:
    sid = cloud.boot("r-1")["id"]
    assert cloud.wait(sid)["status"] == "ACTIVE"
    assert _act(cloud, sid, {"os-resetState": {"state": "error"}}).status_code == 202
    assert cloud.wait(sid)["status"] == "ERROR"
    assert _act(cloud, sid, {"os-resetState": {"state": "active"}}).status_code == 202
    assert _state(cloud.wait(sid)) == ("ACTIVE", "active", 1)
    assert _act(cloud, sid, {"injectNetworkInfo": None}).status_code == 202
    listed = cloud.api.get(f"/v2.1/servers/{sid}/os-instance-actions").json()["instanceActions"]
    assert [a["action"] for a in listed].count("resetState") == 2


def test_driver_without_pause_reverts_the_task(cloud: Cloud) -> None:
    (service,) = cloud.computes.values()
    service.host.driver.unsupported = frozenset({"pause", "suspend"})
    sid = cloud.boot("n-1")["id"]
    assert cloud.wait(sid)["status"] == "ACTIVE"
    for key in ("pause", "suspend"):
        assert _act(cloud, sid, {key: None}).status_code == 202
        # Nova: the task state is reverted, the vm_state kept, the event and a fault say why.
        assert _state(cloud.wait(sid)) == ("ACTIVE", "active", 1)
        assert _events(cloud, sid, key) == {f"compute_{key}_instance": "Error"}


def test_failed_suspend_puts_the_server_in_error(cloud: Cloud) -> None:
    (service,) = cloud.computes.values()

    def broken(_instance: Any) -> None:
        raise PermanentDriverError("disk full while saving memory")

    service.host.driver.suspend = broken  # type: ignore[method-assign, assignment]
    sid = cloud.boot("e-1")["id"]
    assert cloud.wait(sid)["status"] == "ACTIVE"
    assert _act(cloud, sid, {"suspend": None}).status_code == 202
    server = cloud.wait(sid)
    assert server["status"] == "ERROR"
    assert server["fault"]["message"] == "disk full while saving memory"
    assert _events(cloud, sid, "suspend") == {"compute_suspend_instance": "Error"}
