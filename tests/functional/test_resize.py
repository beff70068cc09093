"""Resize and cold migration across every role (api → conductor → scheduler → compute), on
both transports: resize + confirm, resize + revert, cold migrate, and no valid destination."""

from __future__ import annotations

import time
from typing import Any

from tests.functional.conftest import Cloud, Gate

# Standard flavors seeded by openkeel.cmd.bootstrap: 1 = m1.tiny, 2 = m1.small.
TINY = {"VCPU": 1, "MEMORY_MB": 512, "DISK_GB": 1}
SMALL = {"VCPU": 1, "MEMORY_MB": 2048, "DISK_GB": 20}


def _action(cloud: Cloud, server_id: str, body: dict[str, Any], status: int = 202) -> None:
    resp = cloud.api.post(f"/v2.1/servers/{server_id}/action", body, version="2.56")
    assert resp.status_code == status, resp.text


def _settled(cloud: Cloud, server_id: str, timeout: float = 30) -> dict[str, Any]:
    """Wait past VERIFY_RESIZE: confirmResize runs asynchronously without a task state."""
    deadline = time.monotonic() + timeout
    while True:
        server = cloud.wait(server_id)
        if server["status"] != "VERIFY_RESIZE" or time.monotonic() > deadline:
            return server
        time.sleep(0.05)  # polling a real RPC cast, bounded by the deadline


def _booted(cloud: Cloud) -> tuple[str, str]:
    cloud.add_compute()
    server = cloud.wait(cloud.boot("mover")["id"])
    assert server["status"] == "ACTIVE", server
    return server["id"], server["OS-EXT-SRV-ATTR:host"]


def _actions(cloud: Cloud, server_id: str) -> list[str]:
    body = cloud.api.get(f"/v2.1/servers/{server_id}/os-instance-actions").json()
    return sorted(a["action"] for a in body["instanceActions"])


def test_resize_then_confirm(cloud: Cloud) -> None:
    server_id, source = _booted(cloud)
    _action(cloud, server_id, {"resize": {"flavorRef": "2"}})
    server = cloud.wait(server_id)
    assert server["status"] == "VERIFY_RESIZE", server
    assert server["flavor"]["original_name"] == "m1.small"
    assert server["OS-EXT-SRV-ATTR:host"] != source
    _action(cloud, server_id, {"confirmResize": None}, status=204)
    server = _settled(cloud, server_id)
    assert (server["status"], server["OS-EXT-STS:vm_state"]) == ("ACTIVE", "active")
    assert server["flavor"]["original_name"] == "m1.small"
    assert cloud.usage() == SMALL
    assert _actions(cloud, server_id) == ["confirmResize", "create", "resize"]


def test_resize_then_revert(cloud: Cloud) -> None:
    server_id, source = _booted(cloud)
    _action(cloud, server_id, {"resize": {"flavorRef": "2"}})
    assert cloud.wait(server_id)["status"] == "VERIFY_RESIZE"
    assert cloud.usage() == {k: TINY[k] + SMALL[k] for k in TINY}
    _action(cloud, server_id, {"revertResize": None})
    server = cloud.wait(server_id)
    assert server["status"] == "ACTIVE", server
    assert server["flavor"]["original_name"] == "m1.tiny"
    assert server["OS-EXT-SRV-ATTR:host"] == source
    assert cloud.usage() == TINY
    _action(cloud, server_id, {"confirmResize": None}, status=409)


def test_cold_migrate_to_the_other_host(cloud: Cloud) -> None:
    server_id, source = _booted(cloud)
    _action(cloud, server_id, {"migrate": None})
    server = cloud.wait(server_id)
    assert server["status"] == "VERIFY_RESIZE", server
    assert server["OS-EXT-SRV-ATTR:host"] not in (source, None)
    _action(cloud, server_id, {"confirmResize": {}}, status=204)
    server = _settled(cloud, server_id)
    assert server["status"] == "ACTIVE"
    assert server["flavor"]["original_name"] == "m1.tiny"
    assert cloud.usage() == TINY
    migrations = cloud.api.get(f"/v2.1/os-migrations?instance_uuid={server_id}", version="2.59")
    assert migrations.status_code == 200, migrations.text
    (record,) = migrations.json()["migrations"]
    assert (record["status"], record["migration_type"]) == ("confirmed", "migration")
    assert (record["source_compute"], record["dest_compute"]) == (
        source,
        server["OS-EXT-SRV-ATTR:host"],
    )


def test_resize_without_a_destination_keeps_the_server_active(cloud: Cloud) -> None:
    server = cloud.wait(cloud.boot("alone")["id"])  # the only host: no other destination
    _action(cloud, server["id"], {"resize": {"flavorRef": "2"}})
    after = cloud.wait(server["id"])
    assert (after["status"], after["OS-EXT-STS:task_state"]) == ("ACTIVE", None), after
    assert after["flavor"]["original_name"] == "m1.tiny"
    assert cloud.usage() == TINY
    events = cloud.events(server["id"], "resize", version="2.51")
    assert events == {"conductor_migrate_server": "Error"}, events


def test_same_host_resize_when_allowed(cloud: Cloud) -> None:
    cloud.services.conf.set_override("allow_resize_to_same_host", True)
    server = cloud.wait(cloud.boot("here")["id"])
    _action(cloud, server["id"], {"resize": {"flavorRef": "2"}})
    resized = cloud.wait(server["id"])
    assert resized["status"] == "VERIFY_RESIZE", resized
    assert resized["OS-EXT-SRV-ATTR:host"] == server["OS-EXT-SRV-ATTR:host"]
    _action(cloud, server["id"], {"revertResize": None})
    server = cloud.wait(server["id"])
    assert server["status"] == "ACTIVE"
    assert server["flavor"]["original_name"] == "m1.tiny"
    assert cloud.usage() == TINY


def _set_service(cloud: Cloud, host: str, status: str) -> None:
    services = cloud.api.get(f"/v2.1/os-services?host={host}", version="2.53").json()
    path = f"/v2.1/os-services/{services['services'][0]['id']}"
    body: dict[str, Any] = {"status": status}
    if status == "disabled":
        body["disabled_reason"] = "test"
    assert cloud.api.put(path, body, version="2.53").status_code == 200


def test_source_killed_mid_resize_rolls_back_on_restart(cloud: Cloud) -> None:
    """kill -9 of the source compute while it moves the disk: on restart the move is rolled
    back (server on the source, its allocation back, migration error), never left in flight."""
    gate = Gate()
    cloud.gates.append(gate)
    (other,) = cloud.computes
    _set_service(cloud, other, "disabled")
    source = f"source-{time.monotonic_ns()}"
    stuck = cloud.add_compute(source, delays={"migrate_disk_and_power_off": 1.0}, sleep=gate.sleep)
    server = cloud.wait(cloud.boot("interrupted")["id"])
    assert server["OS-EXT-SRV-ATTR:host"] == source
    _set_service(cloud, other, "enabled")
    _action(cloud, server["id"], {"resize": {"flavorRef": "2"}})
    assert gate.entered.wait(30), "the resize never reached the source's disk move"
    stuck.stop(drain=False)  # the source role dies mid-move
    cloud.computes.pop(source)
    cloud.roles.computes.remove(stuck)

    cloud.add_compute(source)  # restarted on the same host: reconciles on start
    settled = cloud.wait(server["id"])
    assert (settled["status"], settled["OS-EXT-SRV-ATTR:host"]) == ("ACTIVE", source)
    assert settled["flavor"]["original_name"] == "m1.tiny"
    migrations = cloud.api.get(f"/v2.1/os-migrations?instance_uuid={server['id']}").json()
    assert [m["status"] for m in migrations["migrations"]] == ["error"]
    assert cloud.usage() == TINY  # the source claim is the instance's again, nothing else
    gate.release()


def _kill(cloud: Cloud, host: str) -> None:
    """kill -9 of one compute role: it stops without draining and is forgotten."""
    service = cloud.computes.pop(host)
    service.stop(drain=False)
    cloud.roles.computes.remove(service)


def _resized_to_other_host(cloud: Cloud, gated: str, delays: dict[str, float], gate: Gate) -> str:
    """A server booted on ``gated`` (a compute whose ``delays`` wait on ``gate``) and resized
    to the other host, in VERIFY_RESIZE."""
    (other,) = cloud.computes
    _set_service(cloud, other, "disabled")
    cloud.add_compute(gated, delays=delays, sleep=gate.sleep)
    server = cloud.wait(cloud.boot("reverted")["id"])
    assert server["OS-EXT-SRV-ATTR:host"] == gated
    _set_service(cloud, other, "enabled")
    _set_service(cloud, gated, "disabled")  # the resize must go to the other host
    _action(cloud, server["id"], {"resize": {"flavorRef": "2"}})
    assert cloud.wait(server["id"])["status"] == "VERIFY_RESIZE"
    return str(server["id"])


def _reverted(cloud: Cloud, server_id: str, source: str) -> None:
    settled = cloud.wait(server_id)
    assert (settled["status"], settled["OS-EXT-SRV-ATTR:host"]) == ("ACTIVE", source), settled
    assert settled["flavor"]["original_name"] == "m1.tiny"
    migrations = cloud.api.get(f"/v2.1/os-migrations?instance_uuid={server_id}").json()
    assert [m["status"] for m in migrations["migrations"]] == ["reverted"]
    assert cloud.usage() == TINY  # the source claim is the instance's again, nothing else


def test_source_killed_mid_revert_finishes_the_revert_on_restart(cloud: Cloud) -> None:
    """kill -9 of the source while it restores the old guest (the destination is done, the
    migration ``reverted``): on restart the source finishes the revert, old flavor and
    allocation back, instead of leaving VERIFY_RESIZE with the wrong claims."""
    gate = Gate()
    cloud.gates.append(gate)
    source = f"source-{time.monotonic_ns()}"
    delays = {"finish_revert_migration": 1.0}
    server_id = _resized_to_other_host(cloud, source, delays, gate)
    _action(cloud, server_id, {"revertResize": None})
    assert gate.entered.wait(30), "the revert never reached the source"
    _kill(cloud, source)
    cloud.add_compute(source)  # restarted on the same host: reconciles on start
    _reverted(cloud, server_id, source)
    gate.release()


def test_destination_killed_mid_revert_finishes_the_revert_on_restart(cloud: Cloud) -> None:
    """kill -9 of the destination while it destroys the new guest (migration ``reverting``):
    on restart it resumes the revert, and the source restores the old guest."""
    gate = Gate()
    cloud.gates.append(gate)
    (dest,) = cloud.computes
    source = f"source-{time.monotonic_ns()}"
    server_id = _resized_to_other_host(cloud, source, {}, gate)
    _kill(cloud, dest)
    cloud.add_compute(dest, delays={"destroy": 1.0}, sleep=gate.sleep)
    _action(cloud, server_id, {"revertResize": None})
    assert gate.entered.wait(30), "the revert never reached the destination"
    _kill(cloud, dest)
    cloud.add_compute(dest)
    _reverted(cloud, server_id, source)
    gate.release()


def test_destination_killed_after_the_guest_moved_frees_the_source_claim(cloud: Cloud) -> None:
    """kill -9 of the destination while it defines the moved guest (migration
    ``post-migrating``): on restart the server goes to ERROR (the guest left the source, there
    is nothing to roll back to) and the source claim the migration held is freed at once, not
    left taken until the orphan audit's next tick."""
    gate = Gate()
    cloud.gates.append(gate)
    (dest,) = cloud.computes
    _set_service(cloud, dest, "disabled")
    source = f"source-{time.monotonic_ns()}"
    cloud.add_compute(source)
    server = cloud.wait(cloud.boot("moved")["id"])
    assert server["OS-EXT-SRV-ATTR:host"] == source
    _kill(cloud, dest)
    cloud.add_compute(dest, delays={"finish_migration": 1.0}, sleep=gate.sleep)
    _set_service(cloud, dest, "enabled")
    _set_service(cloud, source, "disabled")  # the resize must go to the other host
    _action(cloud, server["id"], {"resize": {"flavorRef": "2"}})
    assert gate.entered.wait(30), "the resize never reached the destination's finish"
    _kill(cloud, dest)
    cloud.add_compute(dest)  # restarted on the same host: reconciles on start
    settled = cloud.wait(server["id"])
    assert (settled["status"], settled["OS-EXT-SRV-ATTR:host"]) == ("ERROR", dest), settled
    assert settled["flavor"]["original_name"] == "m1.small"  # the flavor its claim holds
    migrations = cloud.api.get(f"/v2.1/os-migrations?instance_uuid={server['id']}").json()
    assert [m["status"] for m in migrations["migrations"]] == ["error"]
    assert cloud.usage() == SMALL  # the instance's claim on the destination, nothing else
    gate.release()


def test_resize_left_unconfirmed_is_confirmed_after_the_window(cloud: Cloud) -> None:
    """resize_confirm_window: the destination host's periodic task confirms a resize older
    than the window as the API would (a confirmResize action), not one inside it."""
    from openkeel.compute import polls
    from openkeel.runtime.clock import FakeClock

    server_id, _source = _booted(cloud)
    _action(cloud, server_id, {"resize": {"flavorRef": "2"}})
    server = cloud.wait(server_id)
    assert server["status"] == "VERIFY_RESIZE", server
    dest = cloud.computes[server["OS-EXT-SRV-ATTR:host"]].host
    assert polls.poll_unconfirmed_resizes(dest) == []  # resize_confirm_window 0: never
    cloud.services.conf.set_override("resize_confirm_window", 600)
    assert polls.poll_unconfirmed_resizes(dest) == []  # inside the window
    later = FakeClock()
    later.advance(601)
    dest.clock = later
    assert polls.poll_unconfirmed_resizes(dest) == [server_id]
    server = _settled(cloud, server_id)
    assert (server["status"], server["OS-EXT-STS:vm_state"]) == ("ACTIVE", "active")
    assert cloud.usage() == SMALL
    assert _actions(cloud, server_id) == ["confirmResize", "create", "resize"]
    assert polls.poll_unconfirmed_resizes(dest) == []  # confirmed once
