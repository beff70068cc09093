"""shelve, shelveOffload and unshelve across every role, on both transports: SHELVED with a
snapshot image, offloaded at once (shelved_offload_time 0), by the periodic task after the
time, or on request (freeing the host's Placement allocations); unshelve in place (power on,
the image deleted) or through the scheduler (spawned from the shelved image, allocations
claimed again); 2.77/2.91 zone and host rules."""

from __future__ import annotations

import datetime
from typing import Any

from openkeel.clients.image import Caller
from openkeel.db.image_catalog import EmbeddedImageCatalog
from openkeel.runtime.clock import FakeClock
from openkeel.virt.errors import PermanentDriverError
from tests.functional.conftest import IMAGE, Cloud

ADMIN = Caller("admin", is_admin=True)


def _act(cloud: Cloud, sid: str, body: dict[str, Any], version: str = "2.1") -> Any:
    return cloud.api.post(f"/v2.1/servers/{sid}/action", body, version=version)


def _shown(cloud: Cloud, sid: str) -> dict[str, Any]:
    server: dict[str, Any] = cloud.wait(sid)
    return server


def _images(cloud: Cloud) -> list[str]:
    return [
        i.name or ""
        for i in EmbeddedImageCatalog(cloud.services.api_db).list(ADMIN, {})
        if i.id != IMAGE
    ]


def test_shelve_offloads_at_once_and_unshelve_schedules_again(cloud: Cloud) -> None:
    sid = cloud.boot("sh-1")["id"]
    assert _shown(cloud, sid)["status"] == "ACTIVE"
    assert cloud.usage() != {}
    assert _act(cloud, sid, {"shelve": None}).status_code == 202
    server = _shown(cloud, sid)
    assert (server["status"], server["OS-EXT-SRV-ATTR:host"]) == ("SHELVED_OFFLOADED", None)
    assert server["OS-EXT-STS:power_state"] == 4
    assert _images(cloud) == ["sh-1-shelved"]
    assert cloud.usage() == {}  # the host's allocation is gone
    assert cloud.events(sid, "shelve") == {"compute_shelve_instance": "Success"}

    assert _act(cloud, sid, {"unshelve": None}).status_code == 202
    server = _shown(cloud, sid)
    assert (server["status"], server["OS-EXT-STS:power_state"]) == ("ACTIVE", 1)
    assert server["OS-EXT-SRV-ATTR:host"] in cloud.computes
    assert server["image"]["id"] == IMAGE  # the original image, as Nova
    assert _images(cloud) == []  # the shelved image is deleted
    assert cloud.usage() != {}
    assert cloud.events(sid, "unshelve") == {
        "conductor_unshelve_instance": "Success", "compute_unshelve_instance": "Success",
    }  # fmt: skip


def test_shelve_keeps_the_guest_when_offload_is_later(cloud: Cloud) -> None:
    cloud.services.conf.set_override("shelved_offload_time", -1)
    sid = cloud.boot("sh-2")["id"]
    assert _shown(cloud, sid)["status"] == "ACTIVE"
    used = cloud.usage()
    assert _act(cloud, sid, {"shelve": None}).status_code == 202
    server = _shown(cloud, sid)
    assert server["status"] == "SHELVED" and server["OS-EXT-SRV-ATTR:host"]
    assert cloud.usage() == used
    # unshelve in place: powered on, the image deleted
    assert _act(cloud, sid, {"unshelve": None}).status_code == 202
    server = _shown(cloud, sid)
    assert (server["status"], server["OS-EXT-STS:power_state"]) == ("ACTIVE", 1)
    assert _images(cloud) == []
    # shelve again, then offload on request (admin policy)
    assert _act(cloud, sid, {"shelve": None}).status_code == 202
    assert _shown(cloud, sid)["status"] == "SHELVED"
    assert _act(cloud, sid, {"shelveOffload": None}).status_code == 202
    server = _shown(cloud, sid)
    assert (server["status"], server["OS-EXT-SRV-ATTR:host"]) == ("SHELVED_OFFLOADED", None)
    assert cloud.usage() == {}
    assert cloud.events(sid, "shelveOffload") == {"compute_shelve_offload_instance": "Success"}


def test_refusals(cloud: Cloud) -> None:
    sid = cloud.boot("sh-3")["id"]
    assert _shown(cloud, sid)["status"] == "ACTIVE"
    resp = _act(cloud, sid, {"shelveOffload": None})
    assert resp.status_code == 409
    assert resp.json()["conflictingRequest"]["message"] == (
        f"Cannot 'shelveOffload' instance {sid} while it is in vm_state active"
    )
    assert _act(cloud, sid, {"unshelve": None}).status_code == 409
    # before 2.77 the body is not looked at: the state decides
    assert _act(cloud, sid, {"unshelve": {"availability_zone": "nova"}}, "2.76").status_code == 409
    cloud.services.conf.set_override("shelved_offload_time", -1)
    assert _act(cloud, sid, {"shelve": None}).status_code == 202
    assert _shown(cloud, sid)["status"] == "SHELVED"
    resp = _act(cloud, sid, {"unshelve": {"availability_zone": "nova"}}, "2.77")
    assert resp.status_code == 409
    assert resp.json()["conflictingRequest"]["message"] == (
        f'Specifying an availability zone or a host when unshelving server "{sid}" with status '
        '"shelved" is not supported. The server status must be SHELVED_OFFLOADED.'
    )
    assert _act(cloud, sid, {"unshelve": {}}, "2.77").status_code == 400
    assert _act(cloud, sid, {"shelveOffload": None}).status_code == 202
    assert _shown(cloud, sid)["status"] == "SHELVED_OFFLOADED"
    resp = _act(cloud, sid, {"unshelve": {"availability_zone": "nowhere"}}, "2.77")
    assert resp.status_code == 400
    assert resp.json()["badRequest"]["message"] == "The requested availability zone is not available"  # fmt: skip
    resp = _act(cloud, sid, {"unshelve": {"host": "no-such-host"}}, "2.91")
    assert resp.status_code == 400
    assert resp.json()["badRequest"]["message"] == "Compute host no-such-host could not be found."
    (host,) = cloud.computes
    resp = _act(cloud, sid, {"unshelve": {"host": host, "availability_zone": "elsewhere"}}, "2.91")
    assert resp.status_code == 400  # the zone is checked first
    assert _act(cloud, sid, {"unshelve": {"host": host, "availability_zone": None}}, "2.91").status_code == 202  # fmt: skip
    server = _shown(cloud, sid)
    assert (server["status"], server["OS-EXT-SRV-ATTR:host"]) == ("ACTIVE", host)


def test_a_failed_shelve_keeps_the_server_and_deletes_the_image(cloud: Cloud) -> None:
    (service,) = cloud.computes.values()
    sid = cloud.boot("sh-4")["id"]
    assert _shown(cloud, sid)["status"] == "ACTIVE"

    def broken(*_a: Any) -> Any:
        raise PermanentDriverError("no snapshot today")

    service.host.driver.snapshot = broken  # type: ignore[method-assign]
    assert _act(cloud, sid, {"shelve": None}).status_code == 202
    server = _shown(cloud, sid)
    assert server["OS-EXT-STS:task_state"] is None and server["status"] != "SHELVED"
    assert _images(cloud) == []
    assert cloud.events(sid, "shelve") == {"compute_shelve_instance": "Error"}


def test_the_periodic_task_offloads_after_shelved_offload_time(cloud: Cloud) -> None:
    cloud.services.conf.set_override("shelved_offload_time", 60)
    (service,) = cloud.computes.values()
    sid = cloud.boot("sh-5")["id"]
    assert _shown(cloud, sid)["status"] == "ACTIVE"
    assert _act(cloud, sid, {"shelve": None}).status_code == 202
    assert _shown(cloud, sid)["status"] == "SHELVED"
    from openkeel.compute.operations.shelve import offload_shelved_instances

    assert offload_shelved_instances(service.host) == []  # not yet
    clock = FakeClock(datetime.datetime.now(datetime.UTC).replace(tzinfo=None) + datetime.timedelta(seconds=61))  # fmt: skip
    service.host.clock = clock
    assert offload_shelved_instances(service.host) == [sid]
    server = _shown(cloud, sid)
    assert (server["status"], server["OS-EXT-SRV-ATTR:host"]) == ("SHELVED_OFFLOADED", None)
    assert cloud.usage() == {}


def test_a_failed_unshelve_leaves_the_server_offloaded_with_no_allocation(cloud: Cloud) -> None:
    (service,) = cloud.computes.values()
    sid = cloud.boot("sh-6")["id"]
    assert _shown(cloud, sid)["status"] == "ACTIVE"
    assert _act(cloud, sid, {"shelve": None}).status_code == 202
    assert _shown(cloud, sid)["status"] == "SHELVED_OFFLOADED"

    def broken(*_a: Any, **_kw: Any) -> None:
        raise PermanentDriverError("no room for the disk")

    original = service.host.driver.spawn
    service.host.driver.spawn = broken  # type: ignore[method-assign, assignment]
    assert _act(cloud, sid, {"unshelve": None}).status_code == 202
    server = _shown(cloud, sid)
    assert (server["status"], server["OS-EXT-SRV-ATTR:host"]) == ("SHELVED_OFFLOADED", None)
    assert cloud.usage() == {}
    assert cloud.events(sid, "unshelve")["compute_unshelve_instance"] == "Error"
    assert _images(cloud) == ["sh-6-shelved"]  # kept for the next try
    service.host.driver.spawn = original  # type: ignore[method-assign]
    assert _act(cloud, sid, {"unshelve": None}).status_code == 202
    assert _shown(cloud, sid)["status"] == "ACTIVE"


def test_unshelve_with_no_valid_host_stays_offloaded(cloud: Cloud) -> None:
    (host,) = cloud.computes
    sid = cloud.boot("sh-7")["id"]
    assert _shown(cloud, sid)["status"] == "ACTIVE"
    assert _act(cloud, sid, {"shelve": None}).status_code == 202
    assert _shown(cloud, sid)["status"] == "SHELVED_OFFLOADED"
    listed = cloud.api.get(f"/v2.1/os-services?host={host}", version="2.53").json()
    url = f"/v2.1/os-services/{listed['services'][0]['id']}"
    assert cloud.api.put(url, {"status": "disabled"}, version="2.53").status_code == 200
    assert _act(cloud, sid, {"unshelve": None}).status_code == 202
    server = _shown(cloud, sid)
    assert (server["status"], server["OS-EXT-STS:task_state"]) == ("SHELVED_OFFLOADED", None)
    assert cloud.events(sid, "unshelve") == {"conductor_unshelve_instance": "Error"}


def test_compute_killed_mid_shelve_leaves_no_task_state(cloud: Cloud) -> None:
    import uuid as uuid_mod

    from tests.functional.conftest import Gate

    gate = Gate()
    cloud.gates.append(gate)
    (first,) = list(cloud.computes)
    listed = cloud.api.get(f"/v2.1/os-services?host={first}", version="2.53").json()
    url = f"/v2.1/os-services/{listed['services'][0]['id']}"
    assert cloud.api.put(url, {"status": "disabled"}, version="2.53").status_code == 200
    phoenix = f"phoenix-{uuid_mod.uuid4().hex[:6]}"
    stuck = cloud.add_compute(phoenix, delays={"snapshot": 1.0}, sleep=gate.sleep_once)
    sid = cloud.boot("sh-8")["id"]
    assert _shown(cloud, sid)["status"] == "ACTIVE"
    assert _act(cloud, sid, {"shelve": None}).status_code == 202
    assert gate.entered.wait(30), "the shelve's snapshot never reached the driver"
    stuck.stop(drain=False)  # the compute role dies mid-shelve
    cloud.computes.pop(phoenix)
    cloud.roles.computes.remove(stuck)

    # restarted over the same hypervisor (its guests kept): the task state is cleared, as Nova
    cloud.add_compute(phoenix, driver=stuck.host.driver)  # type: ignore[arg-type]
    server = _shown(cloud, sid)
    assert server["OS-EXT-STS:task_state"] is None
    assert server["status"] in ("ACTIVE", "SHUTOFF"), server["status"]  # powered off midway
    assert _act(cloud, sid, {"shelve": None}).status_code == 202  # and it can be shelved again
    assert _shown(cloud, sid)["status"] == "SHELVED_OFFLOADED"
    gate.release()
