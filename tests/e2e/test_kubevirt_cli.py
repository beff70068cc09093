"""Issue 4 end to end: the unchanged ``openstack`` CLI against an all-in-one on KubeVirt.

The all-in-one runs with ``--kubeconfig`` (the KubeVirt driver, one compute host per node)
against the real kube-apiserver through :class:`~tests.e2e.kubevirt_proxy.VirtApiProxy`, which
plays virt-api's subresources; the :class:`~tests.virt.kubevirt.simulator.Simulator` in this
process plays KubeVirt's controllers. Each step checks the server status the CLI sees and the
VirtualMachine / VirtualMachineInstance objects on the API server. Skips locally (fails under
``CI``) when the API server is not answering: ``bash scripts/start-kube-apiserver.sh``.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest

from openkeel.virt.kubevirt import client as k
from tests.e2e.conftest import RunningCloud, all_in_one
from tests.e2e.kubevirt_proxy import VirtApiProxy
from tests.e2e.test_openstack_cli import osc
from tests.virt.kubevirt import kube_env
from tests.virt.kubevirt.simulator import Simulator, StandInVirtApi

T = TypeVar("T")
PROJECT = "admin"  # noauth: the CLI's ``auth_type: none`` acts as admin:admin
IMAGE = "cirros-0.6.3-x86_64-disk"
ROOT = Path(__file__).resolve().parents[2]
DEADLINE = 30.0
# KNOWN GAP: the KubeVirt driver reports no ``supported_instances``, so ImagePropertiesFilter
# turns down every node for an image with ``hw_architecture`` (the seeded cirros has x86_64).
# Until the driver reports them (arch from the node's ``kubernetes.io/arch``), run without it.
CONF = """\
[kubevirt]
namespace_scheme = {prefix}{{project_id}}
[filter_scheduler]
enabled_filters = ComputeFilter,ComputeCapabilitiesFilter,ServerGroupAntiAffinityFilter,ServerGroupAffinityFilter
"""


@dataclass
class KubeCloud:
    """The all-in-one on KubeVirt and what the test needs to look behind it."""

    cloud: RunningCloud
    client: k.KubeClient  # the real API server, real credentials
    namespace: str
    nodes: dict[str, str]  # node name -> zone
    virt_api: StandInVirtApi
    simulator: Simulator

    def vm(self, server_id: str) -> k.JsonObj | None:
        return self.client.get_or_none(k.VMS, f"instance-{server_id}", self.namespace)

    def vmi(self, server_id: str) -> k.JsonObj | None:
        return self.client.get_or_none(k.VMIS, f"instance-{server_id}", self.namespace)


def wait_for(check: Callable[[], T | None], what: str, timeout: float = DEADLINE) -> T:
    """Poll ``check`` until it returns something truthy (bounded by a deadline)."""
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(0.1)  # polling other processes, bounded by the deadline


def api(cloud: RunningCloud, method: str, path: str, body: object = None) -> tuple[int, Any]:
    """A raw compute API call (status polling and probing; the CLI does the operations)."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        cloud.url + path,
        data=data,
        method=method,
        headers={"X-Auth-Token": "notused", "Content-Type": "application/json",
                 "OpenStack-API-Version": "compute 2.96"},
    )  # fmt: skip
    try:
        with urllib.request.urlopen(request, timeout=30) as resp:
            raw = resp.read()
            return resp.status, json.loads(raw) if raw else None
    except urllib.error.HTTPError as exc:
        raw = exc.read()
        return exc.code, json.loads(raw) if raw else None


def server_status(env: KubeCloud, server_id: str, wanted: str) -> k.JsonObj:
    """Wait until the server has ``wanted`` status and no task; fail fast on ERROR."""

    def settled() -> k.JsonObj | None:
        code, body = api(env.cloud, "GET", f"/servers/{server_id}")
        assert code == 200, body
        server: k.JsonObj = body["server"]
        assert server["status"] != "ERROR", server.get("fault")
        done = server["status"] == wanted and server["OS-EXT-STS:task_state"] is None
        return server if done else None

    return wait_for(settled, f"server {server_id} to be {wanted}")


def _connect() -> k.KubeClient:
    client = kube_env.connect()
    if client is None and (os.environ.get("CI") or os.environ.get("OPENKEEL_START_KUBE")):
        script = ROOT / "scripts" / "start-kube-apiserver.sh"
        subprocess.run(["bash", str(script)], check=False, timeout=1800)
        client = kube_env.connect()
    if client is None:
        kube_env.unavailable(f"no answer with {kube_env.KUBECONFIG}")
    return client


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KubeCloud]:
    client = _connect()
    prefix = f"oke-{secrets.token_hex(3)}-"
    nodes = {f"{prefix}node-a": "az-e2e-a", f"{prefix}node-b": "az-e2e-b"}
    for name, zone in nodes.items():
        kube_env.ensure_node(client, name, cpu="8", memory="32Gi", zone=zone)
    simulator = Simulator(client, prefix).start()
    virt_api = StandInVirtApi(client)
    proxy = VirtApiProxy(client.config, virt_api, node_prefix=prefix).start()
    data_dir = tmp_path_factory.mktemp("aio-kubevirt")
    kubeconfig = proxy.kubeconfig(data_dir / "kubeconfig-proxy")
    conf = data_dir / "kubevirt.conf"
    conf.write_text(CONF.format(prefix=prefix))
    args = ("--kubeconfig", str(kubeconfig), "--config-file", str(conf))
    try:
        with all_in_one(data_dir, *args) as cloud:
            yield KubeCloud(cloud, client, f"{prefix}{PROJECT}", nodes, virt_api, simulator)
    finally:
        simulator.stop()
        proxy.stop()
        for name in nodes:
            client.delete(k.NODES, name)
        assert not simulator.errors, simulator.errors
        client.close()


def create_server(env: KubeCloud, name: str, flavor: str = "m1.tiny") -> k.JsonObj:
    created = osc(env.cloud, "server", "create", "--flavor", flavor, "--image", IMAGE,
                  "--nic", "none", "--wait", name)  # fmt: skip
    assert created["status"] == "ACTIVE", created
    return created


def _hypervisors_up(env: KubeCloud) -> bool:
    code, body = api(env.cloud, "GET", "/os-hypervisors")
    names = {h["hypervisor_hostname"] for h in body["hypervisors"]} if code == 200 else set()
    return names == set(env.nodes)


def test_server_lifecycle(env: KubeCloud) -> None:
    wait_for(lambda: _hypervisors_up(env), "one hypervisor per node")
    created = create_server(env, "e2e-kv-life")
    print(created)
