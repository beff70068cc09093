"""The all-in-one runs two simulated compute hosts by default: the unchanged ``openstack`` CLI
sees two hypervisors, a burst of boots uses both, and resize, cold and live migration and an
anti-affinity group work out of the box (issue 10)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from tests.e2e.conftest import RunningCloud
from tests.e2e.test_openstack_cli import osc

HOST = "OS-EXT-SRV-ATTR:host"


def _boot(cloud: RunningCloud, name: str, *extra: str) -> dict[str, Any]:
    server: dict[str, Any] = osc(
        cloud, "server", "create", "--image", "cirros-0.6.3-x86_64-disk", "--flavor", "m1.tiny",
        "--nic", "none", "--wait", *extra, name,
    )  # fmt: skip
    return server


def _delete(cloud: RunningCloud, *names: str) -> None:
    osc(cloud, "server", "delete", "--wait", *names, "--no-output")


def test_two_hypervisors_and_a_burst_uses_both(cloud: RunningCloud) -> None:
    hypervisors = osc(cloud, "hypervisor", "list")
    assert len({h["Hypervisor Hostname"] for h in hypervisors}) == 2, hypervisors
    names = [f"burst-{n}" for n in range(6)]
    with ThreadPoolExecutor(3) as pool:
        booted = list(pool.map(lambda name: _boot(cloud, name), names))
    assert {s["status"] for s in booted} == {"ACTIVE"}
    assert len({s[HOST] for s in booted}) == 2, [s[HOST] for s in booted]
    _delete(cloud, *names)


def test_resize_and_cold_and_live_migration(cloud: RunningCloud) -> None:
    first = _boot(cloud, "mover")
    osc(cloud, "server", "resize", "--flavor", "m1.small", "--wait", "mover", "--no-output")
    osc(cloud, "server", "resize", "confirm", "mover", "--no-output")
    resized = osc(cloud, "server", "show", "mover")
    assert (resized["status"], resized["flavor"]["name"]) == ("ACTIVE", "m1.small")
    osc(cloud, "server", "migrate", "--wait", "mover", "--no-output")
    osc(cloud, "server", "resize", "confirm", "mover", "--no-output")
    migrated = osc(cloud, "server", "show", "mover")
    assert migrated["status"] == "ACTIVE"
    assert migrated[HOST] != resized[HOST]
    osc(cloud, "server", "migrate", "--live-migration", "--wait", "mover", "--no-output")
    live = osc(cloud, "server", "show", "mover")
    assert (live["status"], live[HOST]) == ("ACTIVE", resized[HOST])
    assert first["id"] == live["id"]
    _delete(cloud, "mover")


def test_anti_affinity_group_of_two(cloud: RunningCloud) -> None:
    group = osc(cloud, "server", "group", "create", "--policy", "anti-affinity", "apart")
    members = [_boot(cloud, f"apart-{n}", "--hint", f"group={group['id']}") for n in range(2)]
    assert len({s[HOST] for s in members}) == 2
    _delete(cloud, "apart-0", "apart-1")
    osc(cloud, "server", "group", "delete", "apart", "--no-output")


def test_rebuild_with_the_cli(cloud: RunningCloud) -> None:
    """``openstack server rebuild`` (issue 11): same server, same host, new name and password,
    ACTIVE again; a stopped server stays stopped."""
    before = _boot(cloud, "rebuilt")
    osc(cloud, "--os-compute-api-version", "2.19", "server", "rebuild", "--image",
        "cirros-0.6.3-x86_64-disk", "--name", "rebuilt-2", "--description", "again",
        "--password", "s3cret-pw", "--wait", "rebuilt", "--no-output")  # fmt: skip
    after = osc(cloud, "server", "show", "rebuilt-2")
    assert (after["id"], after["status"], after[HOST]) == (before["id"], "ACTIVE", before[HOST])
    osc(cloud, "server", "stop", "rebuilt-2", "--no-output")
    osc(cloud, "server", "rebuild", "--image", "cirros-0.6.3-x86_64-disk", "--wait", "rebuilt-2", "--no-output")  # fmt: skip
    assert osc(cloud, "server", "show", "rebuilt-2")["status"] == "SHUTOFF"
    _delete(cloud, "rebuilt-2")
