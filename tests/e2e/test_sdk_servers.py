"""openstacksdk, unchanged, runs its server workflows against a fresh all-in-one, logged in
through the embedded identity service: the compute proxy and the cloud layer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import RunningCloud


def sdk(cloud: RunningCloud, step: str) -> Any:
    pytest.importorskip("openstack")
    env = {k: v for k, v in os.environ.items() if not k.startswith("OS_")}
    env.update(OS_CLIENT_CONFIG_FILE=str(cloud.clouds_yaml), PYTHONWARNINGS="ignore")
    done = subprocess.run(
        [sys.executable, "-m", "tests.e2e.sdk_server_steps", step],
        env=env, capture_output=True, text=True, timeout=300,
        cwd=Path(__file__).resolve().parents[2],
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout)


def test_compute_proxy_server_workflow(cloud: RunningCloud) -> None:
    seen = sdk(cloud, "compute_proxy")
    assert seen["status"] == "ACTIVE" and len(seen["project"]) == 32
    assert seen["listed"] == ["sdk-proxy-vm"]
    assert (seen["stopped"], seen["started"]) == ("SHUTOFF", "ACTIVE")
    assert seen["metadata"] == {"role": "e2e"}
    assert seen["after_delete"] is None


def test_cloud_layer_server_workflow(cloud: RunningCloud) -> None:
    seen = sdk(cloud, "cloud_layer")
    assert seen["status"] == "ACTIVE" and seen["got"] is True
    assert "sdk-cloud-vm" in seen["listed"]
    assert seen["quota_instances"] == 10
    assert seen["deleted"] is True and seen["after_delete"] is None
