"""The unchanged ``openstack`` CLI with the all-in-one's embedded identity service: the admin
(clouds.yaml) creates a project and a user, the user logs in with the usual ``OS_*`` variables
and works in their project, and what only Keystone can answer (quota and usage of "my" project,
keypairs of another user, project names) works without ``--os-project`` tricks."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from tests.e2e.conftest import RunningCloud
from tests.e2e.test_openstack_cli import OPENSTACK, osc

IMAGE = "cirros-0.6.3-x86_64-disk"


def osc_as(cloud: RunningCloud, user: str, password: str, project: str, *args: str) -> Any:
    """``openstack <args> -f json`` as ``user`` in ``project`` (environment, no clouds.yaml)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OS_")}
    env.update(
        OS_AUTH_URL=f"{cloud.root}/identity", OS_USERNAME=user, OS_PASSWORD=password,
        OS_PROJECT_NAME=project, OS_USER_DOMAIN_NAME="Default",
        OS_PROJECT_DOMAIN_NAME="Default", OS_IDENTITY_API_VERSION="3",
        PYTHONWARNINGS="ignore",
    )  # fmt: skip
    done = subprocess.run([OPENSTACK, *args, "-f", "json"], env=env, capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    if done.returncode != 0:
        return AssertionError(done.stderr)
    return json.loads(done.stdout) if done.stdout.strip() else None


def test_a_user_of_a_new_project_works_in_it(cloud: RunningCloud, tmp_path: Path) -> None:
    team = osc(cloud, "project", "create", "--description", "e2e team", "team")
    alice = osc(cloud, "user", "create", "--password", "alice-pw", "--project", "team", "alice")
    assert alice["default_project_id"] == team["id"]
    osc(cloud, "role", "add", "--project", "team", "--user", "alice", "member", "--no-output")
    assigned = osc(cloud, "role", "assignment", "list", "--user", "alice", "--names")
    assert [(a["Role"], a["Project"]) for a in assigned] == [("member", "team@Default")]

    token = osc_as(cloud, "alice", "alice-pw", "team", "token", "issue")
    assert token["project_id"] == team["id"] and token["user_id"] == alice["id"]
    server = osc_as(cloud, "alice", "alice-pw", "team", "server", "create", "--flavor",
                    "m1.tiny", "--image", IMAGE, "--nic", "none", "--wait", "alice-vm")  # fmt: skip
    assert server["status"] == "ACTIVE" and server["project_id"] == team["id"]
    mine = osc_as(cloud, "alice", "alice-pw", "team", "server", "list")
    assert [s["Name"] for s in mine] == ["alice-vm"]
    quota = osc_as(cloud, "alice", "alice-pw", "team", "quota", "show")
    assert {"Resource": "instances", "Limit": 10} in quota
    usage = osc_as(cloud, "alice", "alice-pw", "team", "usage", "show")
    assert [s["name"] for s in usage["Servers"]] == ["alice-vm"]
    key = str(tmp_path / "alice-key")
    osc_as(
        cloud, "alice", "alice-pw", "team", "keypair", "create", "--private-key", key, "alice-key"
    )
    # The admin sees alice's work by project and user name.
    everything = osc(cloud, "server", "list", "--all-projects", "--project", "team")
    assert [s["Name"] for s in everything] == ["alice-vm"]
    keys = osc(cloud, "keypair", "list", "--user", "alice")
    assert [k["Name"] for k in keys] == ["alice-key"]
    # A member is not an administrator, of the identity service or of compute.
    # (osc answers a refused project list with the user's own projects, as with Keystone.)
    assert osc_as(cloud, "alice", "alice-pw", "team", "project", "list") == [
        {"ID": team["id"], "Name": "team"}
    ]
    refused = osc_as(cloud, "alice", "alice-pw", "team", "user", "list")
    assert isinstance(refused, AssertionError) and "identity:list_users" in str(refused)
    refused = osc_as(cloud, "alice", "alice-pw", "team", "hypervisor", "list")
    assert isinstance(refused, AssertionError) and "403" in str(refused)
    # An application credential (Cluster API's and Terraform's way in) works where she does.
    cred = osc_as(cloud, "alice", "alice-pw", "team", "application", "credential", "create",
                  "capo")  # fmt: skip
    env = {k: v for k, v in os.environ.items() if not k.startswith("OS_")}
    env.update(
        OS_AUTH_URL=f"{cloud.root}/identity", OS_AUTH_TYPE="v3applicationcredential",
        OS_APPLICATION_CREDENTIAL_ID=cred["ID"], OS_APPLICATION_CREDENTIAL_SECRET=cred["Secret"],
        OS_IDENTITY_API_VERSION="3", PYTHONWARNINGS="ignore",
    )  # fmt: skip
    done = subprocess.run([OPENSTACK, "server", "list", "-f", "json"], env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert [s["Name"] for s in json.loads(done.stdout)] == ["alice-vm"]
    # Without a role on the project, no token for it.
    osc(cloud, "role", "remove", "--project", "team", "--user", "alice", "member", "--no-output")
    locked_out = osc_as(cloud, "alice", "alice-pw", "team", "server", "list")
    assert isinstance(locked_out, AssertionError) and "401" in str(locked_out)
    osc(cloud, "server", "delete", "--wait", server["id"], "--no-output")
    osc(cloud, "user", "delete", "alice", "--no-output")
    osc(cloud, "project", "delete", "team", "--no-output")
