"""The unchanged ``openstack`` CLI against a running all-in-one (clouds.yaml it wrote)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from openkeel.db.image_catalog import DEFAULT_IMAGE
from tests.e2e.conftest import RunningCloud

OPENSTACK = shutil.which("openstack") or str(Path(sys.executable).parent / "openstack")


def osc(cloud: RunningCloud, *args: str) -> Any:
    if not Path(OPENSTACK).exists():
        pytest.skip("python-openstackclient is not installed (pip install -e '.[oracle]')")
    env = {
        **os.environ,
        "OS_CLIENT_CONFIG_FILE": str(cloud.clouds_yaml),
        "PYTHONWARNINGS": "ignore",
    }
    for key in list(env):
        if key.startswith("OS_") and key != "OS_CLIENT_CONFIG_FILE":
            del env[key]
    cmd = [OPENSTACK, "--os-cloud", "openkeel", *args]
    wants_json = args[-1] != "--no-output"
    if wants_json:
        cmd += ["-f", "json"]
    else:
        cmd = cmd[:-1]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"{' '.join(args)} failed:\n{done.stderr}"
    return json.loads(done.stdout) if wants_json and done.stdout.strip() else None


def test_flavor_lifecycle(cloud: RunningCloud) -> None:
    names = {f["Name"] for f in osc(cloud, "flavor", "list")}
    assert {"m1.tiny", "m1.small"} <= names
    created = osc(
        cloud,
        "flavor",
        "create",
        "--ram",
        "256",
        "--vcpus",
        "1",
        "--disk",
        "1",
        "--property",
        "hw:cpu_policy=dedicated",
        "e2e.flavor",
    )
    assert created["name"] == "e2e.flavor"
    shown = osc(cloud, "flavor", "show", "e2e.flavor")
    assert shown["ram"] == 256
    osc(cloud, "flavor", "set", "--property", "hw:mem_page_size=large", "e2e.flavor", "--no-output")
    shown = osc(cloud, "flavor", "show", "e2e.flavor")
    assert shown["properties"]["hw:mem_page_size"] == "large"
    osc(cloud, "flavor", "unset", "--property", "hw:mem_page_size", "e2e.flavor", "--no-output")
    osc(cloud, "flavor", "delete", "e2e.flavor", "--no-output")
    assert "e2e.flavor" not in {f["Name"] for f in osc(cloud, "flavor", "list")}


def test_keypair_lifecycle(cloud: RunningCloud) -> None:
    private = cloud.data_dir / "e2e-key.pem"
    created = osc(cloud, "keypair", "create", "--private-key", str(private), "e2e-key")
    assert created["name"] == "e2e-key"
    assert private.read_text().startswith("-----BEGIN")
    assert any(k["Name"] == "e2e-key" for k in osc(cloud, "keypair", "list"))
    shown = osc(cloud, "keypair", "show", "e2e-key")
    assert shown["fingerprint"] == created["fingerprint"]
    osc(cloud, "keypair", "delete", "e2e-key", "--no-output")
    assert not any(k["Name"] == "e2e-key" for k in osc(cloud, "keypair", "list"))


def test_quotas_limits_and_zones(cloud: RunningCloud) -> None:
    limits = osc(cloud, "limits", "show", "--absolute")
    assert {"Name": "instances", "Value": 10} in limits
    quota = osc(cloud, "quota", "show", "--compute", "admin")
    assert quota
    zones = osc(cloud, "availability", "zone", "list", "--compute")
    assert isinstance(zones, list)


def test_services_hosts_and_hypervisor_uptime(cloud: RunningCloud) -> None:
    services = osc(cloud, "compute", "service", "list")
    assert {"nova-conductor", "nova-scheduler", "nova-compute"} <= {s["Binary"] for s in services}
    assert all(s["State"] == "up" for s in services)
    hosts = osc(cloud, "--os-compute-api-version", "2.42", "host", "list")
    computes = [h["Host Name"] for h in hosts if h["Service"] == "compute"]
    assert computes and {"conductor", "scheduler"} <= {h["Service"] for h in hosts}
    shown = osc(cloud, "--os-compute-api-version", "2.42", "host", "show", computes[0])
    assert shown[0]["Project"] == "(total)"
    hypervisor = osc(cloud, "--os-compute-api-version", "2.88", "hypervisor", "list")[0]
    detail = osc(cloud, "--os-compute-api-version", "2.88", "hypervisor", "show", str(hypervisor["ID"]))  # fmt: skip
    # The client splits the uptime line as it splits the ``uptime`` command's.
    assert detail["uptime"] and detail["users"] == "0" and detail["load_average"]


def test_server_diagnostics_and_events(cloud: RunningCloud) -> None:
    created = osc(
        cloud, "server", "create", "--image", DEFAULT_IMAGE.id, "--flavor", "1",
        "--nic", "none", "--os-compute-api-version", "2.37", "--wait", "e2e-diag",
    )  # fmt: skip
    assert created["status"] == "ACTIVE"
    try:
        # openstacksdk knows only the 2.48 document (the pre-2.48 mapping is in tests/api and
        # tests/functional).
        standard = osc(cloud, "--os-compute-api-version", "2.48", "server", "show", "--diagnostics", created["id"])  # fmt: skip
        assert (standard["state"], standard["num_cpus"]) == ("running", 1)
        events = osc(cloud, "server", "event", "list", created["id"])
        assert "create" in {e["Action"] for e in events}
    finally:
        osc(cloud, "server", "delete", "--wait", created["id"], "--no-output")
