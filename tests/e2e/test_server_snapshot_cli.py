"""Server snapshots and backups through the unchanged ``openstack`` CLI against a running
all-in-one: ``server image create --wait`` gives an active image holding the simulated root disk,
a server boots from it, and ``server backup create`` rotates older backups away."""

from __future__ import annotations

import time
from pathlib import Path

from tests.e2e.conftest import RunningCloud
from tests.e2e.test_openstack_cli import osc
from tests.e2e.test_two_hosts import _boot, _delete


def test_server_image_create_waits_for_an_active_bootable_image(
    cloud: RunningCloud, tmp_path: Path
) -> None:
    server = _boot(cloud, "snap-source")
    image = osc(cloud, "server", "image", "create", "--name", "e2e-snap", "--wait", "snap-source")
    assert (image["name"], image["status"]) == ("e2e-snap", "active")
    shown = osc(cloud, "image", "show", "e2e-snap")
    assert (shown["disk_format"], shown["container_format"], shown["size"]) == (
        "raw",
        "bare",
        65536,
    )
    props = shown["properties"]
    assert (props["instance_uuid"], props["image_type"]) == (server["id"], "snapshot")
    saved = tmp_path / "snap.raw"
    osc(cloud, "image", "save", "--file", str(saved), "e2e-snap", "--no-output")
    assert saved.read_bytes().startswith(
        f"OPENKEEL SIMULATED DISK\nserver {server['id']}\n".encode()
    )
    assert osc(cloud, "server", "show", "snap-source")["status"] == "ACTIVE"

    booted = osc(cloud, "server", "create", "--image", "e2e-snap", "--flavor", "m1.tiny",
                 "--nic", "none", "--wait", "from-snap")  # fmt: skip
    assert booted["status"] == "ACTIVE"
    assert shown["id"] in booted["image"]
    _delete(cloud, "from-snap", "snap-source")
    osc(cloud, "image", "delete", "e2e-snap", "--no-output")


def test_server_backup_create_rotates(cloud: RunningCloud) -> None:
    server = _boot(cloud, "backup-source")
    for name in ("e2e-backup-1", "e2e-backup-2"):
        osc(cloud, "server", "backup", "create", "--name", name, "--type", "daily",
            "--rotate", "1", "--wait", "backup-source")  # fmt: skip
    # --wait ends when the image is active; the rotation follows it on the compute host
    deadline = time.monotonic() + 60
    while True:
        listed = osc(cloud, "image", "list", "--property", f"instance_uuid={server['id']}",
                     "--property", "backup_type=daily")  # fmt: skip
        found = [(i["Name"], i["Status"]) for i in listed]
        if found == [("e2e-backup-2", "active")] or time.monotonic() > deadline:
            break
        time.sleep(0.5)  # polling the compute host's asynchronous rotation, bounded
    assert found == [("e2e-backup-2", "active")]
    _delete(cloud, "backup-source")
    osc(cloud, "image", "delete", "e2e-backup-2", "--no-output")


def test_server_shelve_and_unshelve_to_a_host(cloud: RunningCloud) -> None:
    server = _boot(cloud, "shelf")
    osc(cloud, "server", "shelve", "--wait", "shelf", "--no-output")
    # shelved_offload_time is 0 by default: offloaded at once, no host. --wait ends at SHELVED
    # or SHELVED_OFFLOADED (as with Nova, SHELVED shows while the offload runs)
    deadline = time.monotonic() + 60
    while (shown := osc(cloud, "server", "show", "shelf"))["status"] != "SHELVED_OFFLOADED":
        assert time.monotonic() < deadline, shown
        time.sleep(0.5)  # polling the compute host's asynchronous offload, bounded
    assert shown["OS-EXT-SRV-ATTR:host"] is None
    images = {i["Name"]: i["Status"] for i in osc(cloud, "image", "list")}
    assert images["shelf-shelved"] == "active"
    other = next(h for h in _hosts(cloud) if h != server["OS-EXT-SRV-ATTR:host"])
    osc(cloud, "--os-compute-api-version", "2.91", "server", "unshelve", "--host", other,
        "--wait", "shelf", "--no-output")  # fmt: skip
    shown = osc(cloud, "server", "show", "shelf")
    assert (shown["status"], shown["OS-EXT-SRV-ATTR:host"]) == ("ACTIVE", other)
    assert "shelf-shelved" not in {i["Name"] for i in osc(cloud, "image", "list")}
    _delete(cloud, "shelf")


def _hosts(cloud: RunningCloud) -> list[str]:
    return sorted({s["Host"] for s in osc(cloud, "compute", "service", "list", "--service", "nova-compute")})  # fmt: skip
