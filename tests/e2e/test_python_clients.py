"""Unchanged client libraries against a running all-in-one (no Keystone: each client's own way
of calling a cloud with a known endpoint and token).

- python-novaclient's Python API on a keystoneauth1 session (``noauth`` plugin): flavors, a
  server's create / show / list / delete, quotas.
- apache-libcloud's OpenStack driver with ``ex_force_auth_token`` / ``ex_force_base_url``
  (how libcloud talks to a cloud whose token is known): sizes, images, create_node,
  list_nodes, destroy_node.

The ``nova`` CLI needs a Keystone to log in to (it insists on a user or a project for every
auth type): it waits for the embedded identity service.
"""

from __future__ import annotations

import subprocess
import sys
import time
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
    from keystoneauth1 import noauth, session

    sess = session.Session(auth=noauth.NoAuth(endpoint=cloud.url))
    try:
        _novaclient_workflow(client.Client("2.95", session=sess, endpoint_override=cloud.url))
    finally:
        sess.session.close()  # the test's leak check counts the kept-alive socket


def _novaclient_workflow(nova: Any) -> None:
    assert "m1.tiny" in {f.name for f in nova.flavors.list()}
    server = nova.servers.create("novaclient-vm", image=DEFAULT_IMAGE.id, flavor="1", nics="none")
    shown = _wait(lambda: nova.servers.get(server.id), lambda s: s.status != "BUILD")
    assert shown.status == "ACTIVE"
    assert server.id in {s.id for s in nova.servers.list()}
    assert nova.quotas.get("admin").instances >= 1
    nova.servers.delete(server.id)
    gone = _wait(lambda: {s.id for s in nova.servers.list()}, lambda ids: server.id not in ids)
    assert server.id not in gone


LIBCLOUD_WORKFLOW = """
import sys, time
from libcloud.compute.providers import get_driver
from libcloud.compute.types import NodeState, Provider

url, image_id = sys.argv[1:]
driver = get_driver(Provider.OPENSTACK)(
    "admin", "unused", ex_force_auth_version="3.x_password",
    ex_force_auth_url="http://127.0.0.1:9", ex_force_auth_token="admin:admin",
    ex_force_base_url=url, ex_tenant_name="admin",
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
        [sys.executable, "-c", LIBCLOUD_WORKFLOW, cloud.url, DEFAULT_IMAGE.id],
        capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:3] == ["state running", "destroyed True", "listed False"]
