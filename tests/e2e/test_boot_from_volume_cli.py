"""The unchanged ``openstack`` CLI booting servers from volumes of the all-in-one's volume
service: ``server create --volume`` (an existing bootable volume) and ``server create
--boot-from-volume <size> --image`` (compute makes the volume from the image); the server
shows no image and its volume, the volume is in use, and a server delete gives it back; ``server
rebuild --reimage-boot-volume`` (2.93) reimages the root volume with another image."""

from __future__ import annotations

import time
from pathlib import Path

from tests.e2e.conftest import RunningCloud
from tests.e2e.test_openstack_cli import osc
from tests.e2e.test_volume_cli import IMAGE, _wait_status


def test_server_create_from_an_existing_volume(cloud: RunningCloud) -> None:
    osc(cloud, "volume", "create", "--image", IMAGE, "--size", "1", "e2e-bfv-root")
    root = _wait_status(cloud, "e2e-bfv-root", "available")
    assert root["bootable"] is True
    server = osc(cloud, "server", "create", "--flavor", "m1.tiny", "--volume", "e2e-bfv-root",
                 "--wait", "e2e-bfv")  # fmt: skip
    assert server["status"] == "ACTIVE", server
    assert server["image"] in ("", "N/A (booted from volume)"), server["image"]
    attached = [v["id"] for v in server["volumes_attached"]]
    assert attached == [root["id"]]
    shown = _wait_status(cloud, "e2e-bfv-root", "in-use")
    assert shown["attachments"][0]["device"] == "/dev/vda"
    listed = osc(cloud, "server", "volume", "list", "e2e-bfv")
    assert [(v["Volume ID"], v["Device"]) for v in listed] == [(root["id"], "/dev/vda")]
    osc(cloud, "server", "delete", "--wait", "e2e-bfv", "--no-output")
    _wait_status(cloud, "e2e-bfv-root", "available")
    osc(cloud, "volume", "delete", "e2e-bfv-root", "--no-output")


def test_server_create_boot_from_volume_with_an_image(cloud: RunningCloud) -> None:
    server = osc(cloud, "server", "create", "--flavor", "m1.tiny", "--image", IMAGE,
                 "--boot-from-volume", "2", "--wait",
                 "e2e-bfv-image")  # fmt: skip
    assert server["status"] == "ACTIVE", server
    assert server["image"] in ("", "N/A (booted from volume)"), server["image"]
    (attached,) = server["volumes_attached"]
    volume = _wait_status(cloud, attached["id"], "in-use")
    assert volume["size"] == 2 and volume["bootable"] is True
    assert volume["volume_image_metadata"]["image_name"] == IMAGE
    # OSC asks for no delete_on_termination: the volume outlives the server.
    osc(cloud, "server", "delete", "--wait", "e2e-bfv-image", "--no-output")
    _wait_status(cloud, attached["id"], "available")
    osc(cloud, "volume", "delete", attached["id"], "--no-output")
    assert osc(cloud, "volume", "list") == []


def test_server_rebuild_reimages_the_boot_volume(cloud: RunningCloud, tmp_path: Path) -> None:
    data = tmp_path / "alt.raw"
    data.write_bytes(b"alternative image" * 64)
    alt = osc(cloud, "image", "create", "--disk-format", "raw", "--container-format", "bare",
              "--file", str(data), "e2e-alt")  # fmt: skip
    osc(cloud, "volume", "create", "--image", IMAGE, "--size", "1", "e2e-rebuild-root")
    root = _wait_status(cloud, "e2e-rebuild-root", "available")
    server = osc(cloud, "server", "create", "--flavor", "m1.tiny", "--volume", "e2e-rebuild-root",
                 "--wait", "e2e-rebuild")  # fmt: skip
    assert server["status"] == "ACTIVE", server
    rebuilt = osc(cloud, "--os-compute-api-version", "2.93", "server", "rebuild", "--image",
                  "e2e-alt", "--reimage-boot-volume", "e2e-rebuild")  # fmt: skip
    assert rebuilt["image"] in ("", "N/A (booted from volume)"), rebuilt
    deadline = time.monotonic() + 60  # --wait prints its progress into the JSON output
    while (shown := osc(cloud, "server", "show", "e2e-rebuild"))["OS-EXT-STS:task_state"]:
        assert time.monotonic() < deadline, shown
        time.sleep(0.5)  # the rebuild is a cast: polling its effect, bounded
    assert shown["status"] == "ACTIVE", shown
    volume = _wait_status(cloud, "e2e-rebuild-root", "in-use")
    assert volume["id"] == root["id"]
    assert volume["volume_image_metadata"]["image_id"] == alt["id"]
    osc(cloud, "server", "delete", "--wait", "e2e-rebuild", "--no-output")
    _wait_status(cloud, "e2e-rebuild-root", "available")
    osc(cloud, "volume", "delete", "e2e-rebuild-root", "--no-output")
    osc(cloud, "image", "delete", "e2e-alt", "--no-output")
