"""The unchanged ``openstack`` CLI against the all-in-one (issue 11): ``server rescue`` /
``unrescue`` and ``server set --password`` / ``--root-password`` (changePassword)."""

from __future__ import annotations

import os
import subprocess
import time
from typing import Any

from tests.e2e.conftest import RunningCloud
from tests.e2e.test_openstack_cli import OPENSTACK, osc


def _status(cloud: RunningCloud, name: str, wanted: str) -> dict[str, Any]:
    """``server show`` until its status is ``wanted`` with no task (rescue has no --wait)."""
    deadline = time.monotonic() + 60
    while True:
        server: dict[str, Any] = osc(cloud, "server", "show", name)
        if server["status"] == wanted and not server["OS-EXT-STS:task_state"]:
            return server
        assert time.monotonic() < deadline, server
        time.sleep(0.5)  # polling the cloud's real asynchrony, bounded by the deadline


def _root_password(cloud: RunningCloud, name: str, password: str) -> None:
    """``server set --root-password`` prompts twice; without a terminal it reads stdin."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OS_")}
    env.update(OS_CLIENT_CONFIG_FILE=str(cloud.clouds_yaml), PYTHONWARNINGS="ignore")
    done = subprocess.run(
        [OPENSTACK, "--os-cloud", "openkeel", "server", "set", "--root-password", name],
        input=f"{password}\n{password}\n", env=env, capture_output=True, text=True,
        timeout=120, start_new_session=True,  # no controlling terminal: getpass reads stdin
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


def test_rescue_unrescue_and_password_with_the_cli(cloud: RunningCloud) -> None:
    booted = osc(cloud, "server", "create", "--image", "cirros-0.6.3-x86_64-disk",
                 "--flavor", "m1.tiny", "--nic", "none", "--wait", "rescued")  # fmt: skip
    osc(cloud, "server", "rescue", "--password", "rescue-pw", "rescued", "--no-output")
    rescued = _status(cloud, "rescued", "RESCUE")
    assert (rescued["id"], rescued["OS-EXT-STS:vm_state"]) == (booted["id"], "rescued")
    osc(cloud, "server", "unrescue", "rescued", "--no-output")
    _status(cloud, "rescued", "ACTIVE")
    osc(cloud, "server", "rescue", "--image", "cirros-0.6.3-x86_64-disk", "rescued", "--no-output")
    _status(cloud, "rescued", "RESCUE")
    osc(cloud, "server", "unrescue", "rescued", "--no-output")
    _status(cloud, "rescued", "ACTIVE")
    osc(cloud, "server", "set", "--password", "n3w-pw", "rescued", "--no-output")
    _root_password(cloud, "rescued", "n3w-pw-2")
    events = osc(cloud, "server", "event", "list", "rescued")
    actions = [e["Action"] for e in events]
    assert actions.count("rescue") == 2 and actions.count("unrescue") == 2, actions
    assert actions.count("changePassword") == 2, actions
    assert _status(cloud, "rescued", "ACTIVE")["OS-EXT-STS:power_state"] in (1, "Running")
    osc(cloud, "server", "delete", "--wait", "rescued", "--no-output")
