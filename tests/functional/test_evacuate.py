"""The evacuate server action across every role, on both transports: a server of a host that
is down is rebuilt on another host (scheduler's choice or the one named), its migration of type
``evacuation`` ends ``done``; the dead host, when it comes back, removes its old guest and
marks the migration ``completed``. Refusals as Nova's: the host still up, the same host, an
unknown host; no valid host leaves the server in ERROR."""

from __future__ import annotations

from typing import Any

from openkeel.cmd.roles import start_compute
from tests.conftest import CELL1_UUID
from tests.functional.conftest import Cloud


def _evacuate(cloud: Cloud, sid: str, body: dict[str, Any], version: str = "2.68") -> Any:
    return cloud.api.post(f"/v2.1/servers/{sid}/action", {"evacuate": body}, version=version)


def _force_down(cloud: Cloud, host: str, down: bool = True) -> None:
    services = cloud.api.get(f"/v2.1/os-services?host={host}", version="2.53").json()
    path = f"/v2.1/os-services/{services['services'][0]['id']}"
    assert cloud.api.put(path, {"forced_down": down}, version="2.53").status_code == 200


def _migration(cloud: Cloud, sid: str) -> dict[str, Any]:
    found = cloud.api.get(f"/v2.1/os-migrations?instance_uuid={sid}", version="2.59").json()
    (migration,) = found["migrations"]
    return dict(migration)


def _error(resp: Any, status: int, message: str) -> None:
    assert resp.status_code == status, resp.text
    (fault,) = resp.json().values()
    assert fault["message"] == message


def test_evacuate_rebuilds_on_another_host_and_the_source_cleans_up(cloud: Cloud) -> None:
    (source_host,) = cloud.computes
    target = cloud.add_compute()
    sid = cloud.boot("ev-1", availability_zone=f"nova:{source_host}")["id"]
    assert cloud.wait(sid)["OS-EXT-SRV-ATTR:host"] == source_host
    _error(_evacuate(cloud, sid, {}), 400, f"Compute service of {source_host} is still in use.")
    source = cloud.computes[source_host]
    source.stop()  # the host dies
    _force_down(cloud, source_host)
    assert _evacuate(cloud, sid, {}).status_code == 200
    server = cloud.wait(sid)
    assert (server["status"], server["OS-EXT-SRV-ATTR:host"]) == ("ACTIVE", target.hostname)
    migration = _migration(cloud, sid)
    assert (migration["migration_type"], migration["status"]) == ("evacuation", "done")
    assert (migration["source_compute"], migration["dest_compute"]) == (source_host, target.hostname)  # fmt: skip
    assert cloud.events(sid, "evacuate") == {
        "conductor_rebuild_instance": "Success",
        "compute_rebuild_instance": "Success",
    }
    # the dead host comes back with its old guest still defined
    assert sid in source.host.driver.list_instance_uuids()
    cell = (CELL1_UUID, cloud.services.cell_dbs[CELL1_UUID])
    back = start_compute(cloud.services.conf, cloud.roles.transport, cloud.placement,
                         cloud.services.api_db, cell, source.host.driver, source_host)  # fmt: skip
    cloud.roles.computes.append(back)
    assert sid not in back.host.driver.list_instance_uuids()
    done = _migration(cloud, sid)
    assert done["status"] == "completed"
    # the source's resources were held by the migration until now; only the target's remain
    assert cloud.placement.get_allocations(done["uuid"]).allocations == {}
    (provider,) = cloud.placement.get_allocations(sid).allocations
    assert provider == cloud._provider(f"{target.hostname}-node")
    assert sid in target.host.driver.list_instance_uuids()


def test_evacuate_to_a_named_host_stopped_from_2_95(cloud: Cloud) -> None:
    (source_host,) = cloud.computes
    target = cloud.add_compute()
    cloud.add_compute()  # a third host the scheduler could have picked
    sid = cloud.boot("ev-2", availability_zone=f"nova:{source_host}")["id"]
    assert cloud.wait(sid)["status"] == "ACTIVE"
    cloud.computes[source_host].stop()
    _force_down(cloud, source_host)
    resp = _evacuate(cloud, sid, {"host": target.hostname}, version="2.95")
    assert resp.status_code == 200 and resp.content == b""
    server = cloud.wait(sid)
    assert (server["status"], server["OS-EXT-SRV-ATTR:host"]) == ("SHUTOFF", target.hostname)


def test_evacuate_refusals_and_no_valid_host(cloud: Cloud) -> None:
    (source_host,) = cloud.computes
    sid = cloud.boot("ev-3", availability_zone=f"nova:{source_host}")["id"]
    assert cloud.wait(sid)["status"] == "ACTIVE"
    cloud.computes[source_host].stop()
    _force_down(cloud, source_host)
    _error(_evacuate(cloud, sid, {"host": source_host}), 400, "The target host can't be the same one.")  # fmt: skip
    _error(_evacuate(cloud, sid, {"host": "nowhere"}), 404, "Compute host nowhere not found.")
    resp = _evacuate(cloud, sid, {"onSharedStorage": False, "adminPass": "pw12345"}, version="2.1")
    assert resp.status_code == 200 and resp.json() == {"adminPass": "pw12345"}
    server = cloud.wait(sid)  # no other host: the scheduler finds none
    assert server["status"] == "ERROR"
    assert server["fault"]["message"].startswith("No valid host was found.")
    assert _migration(cloud, sid)["status"] == "error"
