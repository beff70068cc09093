"""Unchanged client libraries against a running all-in-one, each logging in to its embedded
identity service with the admin's user name and password and finding compute in the catalog.

- python-novaclient's Python API on a keystoneauth1 password session: flavors, a server's
  create / show / list / delete, quotas.
- the ``nova`` CLI with the usual ``OS_*`` variables: list, boot, show, quota-show, delete.
- apache-libcloud's OpenStack driver (``3.x_password``): sizes, images, create_node,
  list_nodes, destroy_node.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from openkeel.db.image_catalog import DEFAULT_IMAGE
from tests.e2e.conftest import RunningCloud

DEADLINE = 60.0


def _wait(get: Any, done: Any) -> Any:
    deadline = time.monotonic() + DEADLINE
    while True:
        found = get()
        if done(found) or time.monotonic() > deadline:
            return found
        time.sleep(0.1)  # polling a real server's status, bounded by the deadline


def test_novaclient_server_workflow(cloud: RunningCloud) -> None:
    client = pytest.importorskip("novaclient.client", reason="pip install -e '.[oracle]'")
    from keystoneauth1 import session
    from keystoneauth1.identity import v3

    auth = v3.Password(
        auth_url=f"{cloud.root}/identity", username="admin", password=cloud.admin_password,
        project_name="admin", user_domain_id="default", project_domain_id="default",
    )  # fmt: skip
    sess = session.Session(auth=auth)
    try:
        _novaclient_workflow(client.Client("2.95", session=sess))
    finally:
        sess.session.close()  # the test's leak check counts the kept-alive socket


def _novaclient_workflow(nova: Any) -> None:
    assert "m1.tiny" in {f.name for f in nova.flavors.list()}
    server = nova.servers.create("novaclient-vm", image=DEFAULT_IMAGE.id, flavor="1", nics="none")
    shown = _wait(lambda: nova.servers.get(server.id), lambda s: s.status != "BUILD")
    assert shown.status == "ACTIVE"
    assert server.id in {s.id for s in nova.servers.list()}
    project = nova.client.session.get_project_id()
    assert nova.quotas.get(project).instances >= 1
    nova.servers.delete(server.id)
    gone = _wait(lambda: {s.id for s in nova.servers.list()}, lambda ids: server.id not in ids)
    assert server.id not in gone


LIBCLOUD_WORKFLOW = """
import sys, time
from libcloud.compute.providers import get_driver
from libcloud.compute.types import NodeState, Provider

auth_url, password, image_id = sys.argv[1:]
driver = get_driver(Provider.OPENSTACK)(
    "admin", password, ex_force_auth_version="3.x_password",
    ex_force_auth_url=auth_url, ex_tenant_name="admin", ex_domain_name="Default",
    ex_force_service_region="RegionOne",
)
size = next(s for s in driver.list_sizes() if s.name == "m1.tiny")
image = next(i for i in driver.list_images() if i.id == image_id)
node = driver.create_node(name="libcloud-vm", size=size, image=image)
deadline = time.monotonic() + 60
while True:
    found = next(n for n in driver.list_nodes() if n.id == node.id)
    if found.state != NodeState.PENDING or time.monotonic() > deadline:
        break
    time.sleep(0.1)
print("state", found.state)
print("destroyed", driver.destroy_node(found))
while node.id in {n.id for n in driver.list_nodes()} and time.monotonic() < deadline + 60:
    time.sleep(0.1)
print("listed", node.id in {n.id for n in driver.list_nodes()})
"""


def test_libcloud_node_workflow(cloud: RunningCloud) -> None:
    """In a child process: libcloud keeps HTTP connections of finished requests open."""
    pytest.importorskip("libcloud", reason="pip install -e '.[oracle]'")
    done = subprocess.run(
        [sys.executable, "-c", LIBCLOUD_WORKFLOW, f"{cloud.root}/identity", cloud.admin_password,
         DEFAULT_IMAGE.id],
        capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:3] == ["state running", "destroyed True", "listed False"]


def nova_cli(cloud: RunningCloud, *args: str) -> str:
    """``nova <args>`` with the ``OS_*`` variables a user of this cloud exports."""
    nova = Path(sys.executable).with_name("nova")
    if not nova.exists():
        pytest.skip("python-novaclient's CLI is not installed (pip install -e '.[oracle]')")
    env = {k: v for k, v in os.environ.items() if not k.startswith("OS_")}
    env.update(
        OS_AUTH_URL=f"{cloud.root}/identity", OS_USERNAME="admin", OS_PROJECT_NAME="admin",
        OS_PASSWORD=cloud.admin_password, OS_USER_DOMAIN_NAME="Default",
        OS_PROJECT_DOMAIN_NAME="Default", OS_COMPUTE_API_VERSION="2.95",
        PYTHONWARNINGS="ignore",
    )  # fmt: skip
    done = subprocess.run([str(nova), *args], env=env, capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert done.returncode == 0, f"nova {' '.join(args)}: {done.stderr}"
    return done.stdout


def test_nova_cli_server_workflow(cloud: RunningCloud) -> None:
    assert "m1.tiny" in nova_cli(cloud, "flavor-list")
    booted = nova_cli(cloud, "boot", "--flavor", "m1.tiny", "--image", DEFAULT_IMAGE.name,
                      "--nic", "none", "--poll", "nova-cli-vm")  # fmt: skip
    assert "nova-cli-vm" in booted
    shown = nova_cli(cloud, "show", "nova-cli-vm")
    assert "| status                               | ACTIVE" in shown
    assert "| instances            | 10" in nova_cli(cloud, "quota-show")
    nova_cli(cloud, "delete", "nova-cli-vm")
    gone = _wait(lambda: nova_cli(cloud, "list"), lambda out: "nova-cli-vm" not in out)
    assert "nova-cli-vm" not in gone
