"""Ansible's openstack.cloud collection (from the ``ansible`` package), unchanged, runs the
standard server workflow against a fresh all-in-one: compute_flavor, keypair, server_group,
server (create with wait, delete), server_action (stop, start) and server_info."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import RunningCloud

PLAYBOOK = Path(__file__).with_name("ansible") / "server_workflow.yml"
# The collection (2.5.0 in ansible 14) reads ``openstack.version`` after ``import openstack``;
# openstacksdk 4 no longer imports that submodule from its package, so every module fails with
# "module 'openstack' has no attribute 'version'". A client-side shim, not an OpenKeel change:
# the modules' interpreter imports it first (sitecustomize on PYTHONPATH).
SDK_SHIM = "import openstack.version  # noqa: F401  (openstack.cloud needs the attribute)\n"


def test_openstack_cloud_collection_server_workflow(cloud: RunningCloud, tmp_path: Path) -> None:
    playbook = Path(sys.executable).with_name("ansible-playbook")
    if not playbook.exists():
        pytest.skip("ansible is not installed (pip install -e '.[oracle]')")
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "sitecustomize.py").write_text(SDK_SHIM)
    env = {k: v for k, v in os.environ.items() if not k.startswith("OS_")}
    env.update(
        PYTHONPATH=os.pathsep.join(p for p in (str(shim), env.get("PYTHONPATH", "")) if p),
        OS_CLIENT_CONFIG_FILE=str(cloud.clouds_yaml),
        ANSIBLE_LOCAL_TEMP=str(tmp_path / "ansible-local"),
        ANSIBLE_HOME=str(tmp_path / "ansible-home"),
        ANSIBLE_PYTHON_INTERPRETER=sys.executable,
        ANSIBLE_NOCOLOR="1",
        ANSIBLE_DEPRECATION_WARNINGS="false",
        PYTHONWARNINGS="ignore",
    )
    done = subprocess.run(
        [str(playbook), "-i", "localhost,", str(PLAYBOOK)],
        env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    assert "failed=0" in done.stdout
