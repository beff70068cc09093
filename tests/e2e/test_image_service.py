"""The image service of a running all-in-one through unchanged clients: the ``openstack`` CLI,
openstacksdk's image proxy and its cloud layer; a server boots from an uploaded image."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import RunningCloud
from tests.e2e.test_openstack_cli import osc

DATA = os.urandom(300_000)


@pytest.fixture
def image_file(tmp_path: Path) -> Path:
    path = tmp_path / "disk.qcow2"
    path.write_bytes(DATA)
    return path


def test_cli_image_lifecycle_and_boot(cloud: RunningCloud, image_file: Path) -> None:
    created = osc(
        cloud, "image", "create", "--file", str(image_file), "--disk-format", "qcow2",
        "--container-format", "bare", "e2e-image",
    )  # fmt: skip
    assert created["status"] == "active"
    assert created["size"] == len(DATA)
    assert created["checksum"] == hashlib.md5(DATA, usedforsecurity=False).hexdigest()
    listed = {i["Name"]: i["Status"] for i in osc(cloud, "image", "list")}
    assert listed["e2e-image"] == "active"
    osc(cloud, "image", "set", "--property", "hw_disk_bus=virtio", "--tag", "e2e",
        "e2e-image", "--no-output")  # fmt: skip
    shown = osc(cloud, "image", "show", "e2e-image")
    assert shown["properties"]["hw_disk_bus"] == "virtio"
    assert shown["tags"] == ["e2e"]
    osc(cloud, "image", "unset", "--tag", "e2e", "--property", "hw_disk_bus", "e2e-image",
        "--no-output")  # fmt: skip
    shown = osc(cloud, "image", "show", "e2e-image")
    assert shown["tags"] == [] and "hw_disk_bus" not in shown["properties"]
    saved = image_file.with_suffix(".saved")
    osc(cloud, "image", "save", "--file", str(saved), "e2e-image", "--no-output")
    assert saved.read_bytes() == DATA

    server = osc(cloud, "server", "create", "--image", "e2e-image", "--flavor", "m1.tiny",
                 "--nic", "none", "--wait", "e2e-from-upload")  # fmt: skip
    assert server["status"] == "ACTIVE"
    assert created["id"] in server["image"]
    osc(cloud, "server", "delete", "--wait", "e2e-from-upload", "--no-output")

    osc(cloud, "image", "set", "--deactivate", "e2e-image", "--no-output")
    assert osc(cloud, "image", "show", "e2e-image")["status"] == "deactivated"
    osc(cloud, "image", "set", "--activate", "e2e-image", "--no-output")
    assert osc(cloud, "image", "show", "e2e-image")["status"] == "active"
    osc(cloud, "image", "delete", "e2e-image", "--no-output")
    assert "e2e-image" not in {i["Name"] for i in osc(cloud, "image", "list")}


def test_cli_sharing(cloud: RunningCloud) -> None:
    # The CLI names the project: the identity service resolves it to its id.
    demo = osc(cloud, "project", "create", "--or-show", "image-demo")["id"]
    osc(cloud, "image", "create", "--shared", "e2e-shared", "--no-output")
    osc(cloud, "image", "add", "project", "e2e-shared", "image-demo", "--no-output")
    members = osc(cloud, "image", "member", "list", "e2e-shared")
    assert [(m["Member ID"], m["Status"]) for m in members] == [(demo, "pending")]
    osc(cloud, "image", "remove", "project", "e2e-shared", "image-demo", "--no-output")
    osc(cloud, "image", "delete", "e2e-shared", "--no-output")


def sdk(cloud: RunningCloud, step: str, image_file: Path) -> Any:
    """Run one step of tests/e2e/sdk_image_steps.py against the cloud; what it saw."""
    pytest.importorskip("openstack")
    env = {
        **os.environ,
        "OS_CLIENT_CONFIG_FILE": str(cloud.clouds_yaml),
        "PYTHONWARNINGS": "ignore",
    }
    done = subprocess.run(
        [sys.executable, "-m", "tests.e2e.sdk_image_steps", step, str(image_file)],
        env=env, capture_output=True, text=True, timeout=120,
        cwd=Path(__file__).resolve().parents[2],
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_sdk_cloud_layer(cloud: RunningCloud, image_file: Path) -> None:
    seen = sdk(cloud, "cloud_layer", image_file)
    assert "cirros-0.6.3-x86_64-disk" in seen["listed"]
    assert seen["cirros_status"] == "active"
    assert seen["created"]["status"] == "active" and seen["created"]["size"] == len(DATA)
    assert seen["got_id"] == seen["created"]["id"]
    assert seen["servers_detailed"]  # failed on the image proxy's missing status: issue 10
    assert seen["deleted"] and seen["after_delete"] is None


def test_sdk_image_proxy(cloud: RunningCloud, image_file: Path) -> None:
    seen = sdk(cloud, "image_proxy", image_file)
    assert seen["created_status"] == "queued"
    assert seen["uploaded_status"] == "active"
    assert seen["updated"] == ["e2e-proxy2", "scsi", ["t"]]
    assert seen["tags_after_remove"] == []
    assert seen["downloaded"] == "0123456789"
    assert seen["filtered"] == ["e2e-proxy2"]
    assert seen["after_delete"] is None
