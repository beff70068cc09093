"""Issue 4 end to end: the unchanged ``openstack`` CLI against an all-in-one on KubeVirt.

The all-in-one runs with ``--kubeconfig`` (the KubeVirt driver, one compute host per node)
against the real kube-apiserver through :class:`~tests.e2e.kubevirt_proxy.VirtApiProxy`, which
plays virt-api's subresources; the :class:`~tests.virt.kubevirt.simulator.Simulator` in this
process plays KubeVirt's controllers. create / stop / start / reboot (soft, hard) / pause /
unpause / resize + confirm / delete each check the server status the API reports and the
VirtualMachine / VirtualMachineInstance objects on the API server (and which virt-api calls
were made). Skips locally (fails under
``CI``) when the API server is not answering: ``bash scripts/start-kube-apiserver.sh``.
"""

from __future__ import annotations

import base64
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
from tests import leaks
from tests.e2e.conftest import RunningCloud, all_in_one
from tests.e2e.kubevirt_proxy import VirtApiProxy
from tests.e2e.test_openstack_cli import osc
from tests.virt.kubevirt import kube_env, sim_export
from tests.virt.kubevirt.simulator import Simulator, StandInVirtApi

T = TypeVar("T")
PROJECT = "admin"  # noauth: the CLI's ``auth_type: none`` acts as admin:admin
IMAGE = "cirros-0.6.3-x86_64-disk"
ROOT = Path(__file__).resolve().parents[2]
DEADLINE = 30.0
# sync_power_state_interval = 1: a guest that powers off by itself shows within seconds.
# noauth2: the test reads and writes as admin:admin in a namespace named after that project
# (the embedded identity service is tested by tests/e2e/test_python_clients.py and others).
CONF = """\
[api]
auth_strategy = noauth2
[DEFAULT]
sync_power_state_interval = 1
running_deleted_instance_poll_interval = 1
report_interval = 1
service_down_time = 4
[kubevirt]
namespace_scheme = {prefix}{{project_id}}
network_mappings = e2e-podnet:pod
export_ready_timeout = 3
images_namespace = {prefix}images
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
    proxy: VirtApiProxy

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
    simulator = Simulator(client, prefix)
    kube_sockets = leaks.kube_client_sockets(client)
    export_server = simulator.exports.server.socket.fileno()  # the stand-in export server
    owner = leaks.owned_by("the module's kube client", lambda: [*kube_sockets(), export_server])
    simulator.start()
    virt_api = StandInVirtApi(client)
    proxy = VirtApiProxy(client.config, virt_api, node_prefix=prefix).start()
    data_dir = tmp_path_factory.mktemp("aio-kubevirt")
    kubeconfig = proxy.kubeconfig(data_dir / "kubeconfig-proxy")
    conf = data_dir / "kubevirt.conf"
    conf.write_text(CONF.format(prefix=prefix))
    args = ("--kubeconfig", str(kubeconfig), "--config-file", str(conf))
    try:
        with all_in_one(data_dir, *args) as cloud:
            yield KubeCloud(cloud, client, f"{prefix}{PROJECT}", nodes, virt_api, simulator, proxy)
    finally:
        simulator.stop()
        proxy.stop()
        leftovers = _clean_up(client, f"{prefix}{PROJECT}", nodes)
        client.close()
        leaks.released(owner)
    assert not simulator.errors, simulator.errors
    assert not leftovers, f"objects left behind by the servers: {leftovers}"


def _clean_up(client: k.KubeClient, namespace: str, nodes: dict[str, str]) -> list[str]:
    """Delete the test's nodes and whatever its servers left (a bare API server has no
    garbage collector); the namespace itself stays (no namespace controller to finalize it)."""
    for name in nodes:
        client.delete(k.NODES, name)
    left = []
    for res in (k.VMS, k.VMIS, k.DATA_VOLUMES, k.SECRETS):
        for obj in client.items(res, namespace, "app.kubernetes.io/managed-by=openkeel"):
            left.append(f"{res.kind}/{obj['metadata']['name']}")
            client.delete(res, obj["metadata"]["name"], namespace)
    return left


def create_server(env: KubeCloud, name: str, flavor: str = "m1.tiny") -> k.JsonObj:
    created: k.JsonObj = osc(env.cloud, "server", "create", "--flavor", flavor, "--image", IMAGE,
                  "--nic", "none", "--wait", name)  # fmt: skip
    assert created["status"] == "ACTIVE", created
    return created


def _hypervisors_up(env: KubeCloud) -> bool:
    code, body = api(env.cloud, "GET", "/os-hypervisors")
    names = {h["hypervisor_hostname"] for h in body["hypervisors"]} if code == 200 else set()
    return names == set(env.nodes)


@pytest.fixture(scope="module")
def cloud_up(env: KubeCloud) -> KubeCloud:
    """``env`` once every node reports as a hypervisor (the scheduler can place servers)."""
    wait_for(lambda: _hypervisors_up(env), "one hypervisor per node")
    return env


def assert_vm_for(env: KubeCloud, server: k.JsonObj) -> k.JsonObj:
    """The server's VirtualMachine: identity, labels, pinning to the server's node."""
    vm = env.vm(server["id"])
    assert vm is not None, f"no VirtualMachine for {server['id']} in {env.namespace}"
    meta, spec = vm["metadata"], vm["spec"]
    node = server["OS-EXT-SRV-ATTR:host"]
    assert node in env.nodes
    assert server["OS-EXT-SRV-ATTR:hypervisor_hostname"] == node
    assert spec["runStrategy"] == "Manual"
    assert spec["template"]["spec"]["domain"]["firmware"]["uuid"] == server["id"]
    assert spec["template"]["spec"]["nodeSelector"] == {k.HOSTNAME_LABEL: node}
    for labels in (meta["labels"], spec["template"]["metadata"]["labels"]):
        assert labels["nova.openstack.org/server-id"] == server["id"]
        assert labels["nova.openstack.org/project-id"] == PROJECT
        assert labels["app.kubernetes.io/managed-by"] == "openkeel"
    assert meta["labels"]["nova.openstack.org/node"] == node
    return vm


def running_vmi(env: KubeCloud, server_id: str) -> k.JsonObj:
    vmi = env.vmi(server_id)
    assert vmi is not None and vmi["status"]["phase"] == "Running", vmi
    assert vmi["metadata"]["labels"]["kubevirt.io/nodeName"] == vmi["status"]["nodeName"]
    return vmi


def owned_objects(env: KubeCloud, server_id: str) -> dict[str, list[str]]:
    """Names of the server's DataVolumes and Secrets (they go with the server)."""
    selector = f"nova.openstack.org/server-id={server_id}"
    return {
        res.kind: sorted(
            o["metadata"]["name"] for o in env.client.items(res, env.namespace, selector)
        )
        for res in (k.DATA_VOLUMES, k.SECRETS)
    }


def vm_status(env: KubeCloud, server_id: str) -> str | None:
    vm = env.vm(server_id)
    return None if vm is None else vm.get("status", {}).get("printableStatus")


def test_create_stop_start_reboot_delete(cloud_up: KubeCloud) -> None:
    env = cloud_up
    created = create_server(env, "e2e-kv-life")
    sid = created["id"]
    vm = assert_vm_for(env, server_status(env, sid, "ACTIVE"))
    assert vm["spec"]["template"]["spec"]["domain"]["memory"]["guest"] == "512Mi"
    name = vm["metadata"]["name"]
    first = running_vmi(env, sid)
    assert owned_objects(env, sid) == {"DataVolume": [f"{name}-root"], "Secret": [f"{name}-cloudinit"]}  # fmt: skip
    assert vm_status(env, sid) == "Running"

    osc(env.cloud, "server", "stop", sid, "--no-output")
    assert server_status(env, sid, "SHUTOFF")["OS-EXT-STS:power_state"] == 4
    assert env.vmi(sid) is None
    wait_for(lambda: vm_status(env, sid) == "Stopped", "VM printableStatus Stopped")
    assert env.vm(sid)["spec"]["runStrategy"] == "Manual"  # type: ignore[index]

    osc(env.cloud, "server", "start", sid, "--no-output")
    assert server_status(env, sid, "ACTIVE")["OS-EXT-STS:power_state"] == 1
    second = running_vmi(env, sid)
    assert second["metadata"]["uid"] != first["metadata"]["uid"]  # a new VMI: a cold start

    osc(env.cloud, "server", "reboot", "--soft", "--wait", sid, "--no-output")
    server_status(env, sid, "ACTIVE")
    osc(env.cloud, "server", "reboot", "--hard", "--wait", sid, "--no-output")
    server_status(env, sid, "ACTIVE")
    assert running_vmi(env, sid)["metadata"]["uid"] == second["metadata"]["uid"]  # same VMI
    calls = [call for call in env.virt_api.calls if call[1] == name]
    assert calls == [("start", name), ("stop", name), ("start", name),
                     ("softreboot", name), ("reset", name)]  # fmt: skip

    osc(env.cloud, "server", "delete", "--wait", sid, "--no-output")
    assert env.vm(sid) is None and env.vmi(sid) is None
    assert owned_objects(env, sid) == {"DataVolume": [], "Secret": []}
    code, body = api(env.cloud, "GET", f"/servers/{sid}")
    assert (code, body) == (404, {"itemNotFound": {"code": 404, "message": f"Instance {sid} could not be found."}})  # fmt: skip


def test_guest_powers_off_by_itself(cloud_up: KubeCloud) -> None:
    """virt-handler reports the guest shut down (VMI phase Succeeded, no API call): the
    compute host's power sync notices through the driver and stops the server like Nova."""
    env = cloud_up
    sid = create_server(env, "e2e-kv-poweroff")["id"]
    name = f"instance-{sid}"
    calls = len(env.virt_api.calls)

    def shut_down(vmi: k.JsonObj) -> None:
        vmi["status"]["phase"] = "Succeeded"
        vmi["status"]["conditions"] = []

    env.client.update(k.VMIS, name, shut_down, env.namespace)
    server = server_status(env, sid, "SHUTOFF")
    assert (server["OS-EXT-STS:vm_state"], server["OS-EXT-STS:power_state"]) == ("stopped", 4)
    assert env.virt_api.calls[calls:] == []  # nothing to stop: the guest is already off
    osc(env.cloud, "server", "delete", "--wait", sid, "--no-output")
    assert env.vm(sid) is None and env.vmi(sid) is None


@pytest.fixture(scope="module")
def spare_server(cloud_up: KubeCloud) -> Iterator[str]:
    """An ACTIVE server shared by the pause and resize tests (each leaves it ACTIVE)."""
    sid: str = create_server(cloud_up, "e2e-kv-spare")["id"]
    yield sid
    osc(cloud_up.cloud, "server", "delete", "--wait", sid, "--no-output")
    assert cloud_up.vm(sid) is None


def test_pause_unpause(cloud_up: KubeCloud, spare_server: str) -> None:
    env, sid = cloud_up, spare_server
    name, uid = f"instance-{sid}", running_vmi(env, sid)["metadata"]["uid"]
    osc(env.cloud, "server", "pause", sid, "--no-output")
    assert server_status(env, sid, "PAUSED")["OS-EXT-STS:power_state"] == 3
    wait_for(lambda: vm_status(env, sid) == "Paused", "VM printableStatus Paused")
    conditions = running_vmi(env, sid)["status"]["conditions"]
    assert {"type": "Paused", "status": "True", "reason": "PausedByUser"} in conditions
    osc(env.cloud, "server", "unpause", sid, "--no-output")
    assert server_status(env, sid, "ACTIVE")["OS-EXT-STS:power_state"] == 1
    wait_for(lambda: vm_status(env, sid) == "Running", "VM printableStatus Running")
    assert running_vmi(env, sid)["metadata"]["uid"] == uid  # the same guest, never restarted
    assert [c for c in env.virt_api.calls if c[1] == name][-2:] == [("pause", name), ("unpause", name)]  # fmt: skip


def test_resize_and_confirm(cloud_up: KubeCloud, spare_server: str) -> None:
    """m1.tiny -> m1.small; Nova's default (no resize to the same host) moves it to the other
    node: the same VirtualMachine is rewritten and pinned there."""
    env, sid = cloud_up, spare_server
    source = server_status(env, sid, "ACTIVE")["OS-EXT-SRV-ATTR:host"]
    osc(env.cloud, "server", "resize", "--flavor", "m1.small", "--wait", sid, "--no-output")
    resized = server_status(env, sid, "VERIFY_RESIZE")
    target = resized["OS-EXT-SRV-ATTR:host"]
    assert target in env.nodes and target != source
    vm = assert_vm_for(env, resized)
    assert "nova.openstack.org/resize-source" in vm["metadata"]["annotations"]
    assert running_vmi(env, sid)["status"]["nodeName"] == target
    osc(env.cloud, "server", "resize", "confirm", sid, "--no-output")
    server = server_status(env, sid, "ACTIVE")
    assert (server["flavor"]["original_name"], server["OS-EXT-SRV-ATTR:host"]) == ("m1.small", target)  # fmt: skip
    vm = assert_vm_for(env, server)
    assert vm["spec"]["template"]["spec"]["domain"]["memory"]["guest"] == "2048Mi"
    assert vm["metadata"]["labels"]["nova.openstack.org/flavor-id"] == "2"
    assert "nova.openstack.org/resize-source" not in vm["metadata"].get("annotations", {})
    assert running_vmi(env, sid)["status"]["nodeName"] == target


def test_live_migration_moves_the_pin_then_the_guest(
    cloud_up: KubeCloud, spare_server: str
) -> None:
    """Under KubeVirt's rule (the VMI's own node selector wins over the migration's added one)
    the guest reaches the chosen node: the same VMI, now selecting and running there."""
    env, sid = cloud_up, spare_server
    source = server_status(env, sid, "ACTIVE")["OS-EXT-SRV-ATTR:host"]
    target = next(node for node in env.nodes if node != source)
    uid = running_vmi(env, sid)["metadata"]["uid"]
    osc(env.cloud, "--os-compute-api-version", "2.30", "server", "migrate", "--live-migration",
        "--host", target, sid, "--no-output")  # fmt: skip
    server = server_status(env, sid, "ACTIVE")
    assert server["OS-EXT-SRV-ATTR:host"] == target
    assert_vm_for(env, server)  # the template selects the target
    vmi = running_vmi(env, sid)
    assert (vmi["metadata"]["uid"], vmi["status"]["nodeName"]) == (uid, target)
    assert vmi["spec"]["nodeSelector"] == {k.HOSTNAME_LABEL: target}


def _pod_address(env: KubeCloud, server_id: str) -> str:
    (status,) = running_vmi(env, server_id)["status"]["interfaces"]
    return str(status["ipAddress"])


def _pod_network(env: KubeCloud) -> None:
    """The network ``e2e-podnet``, mapped to the pod network (made once per module)."""
    if osc(env.cloud, "network", "list", "--name", "e2e-podnet"):
        return
    osc(env.cloud, "network", "create", "--share", "e2e-podnet")
    # The subnet is the cluster's pod CIDR; the pool the network service allocates from at
    # boot lies where the cluster gives no pod an address.
    osc(env.cloud, "subnet", "create", "--network", "e2e-podnet", "--subnet-range", "10.244.0.0/16",
        "--allocation-pool", "start=10.244.255.2,end=10.244.255.254", "e2e-podnet-v4")  # fmt: skip


def test_pod_network_addresses_are_the_guests(cloud_up: KubeCloud) -> None:
    """A network mapped to the pod network: the server's address is its pod's IP, as the VMI
    reports it, and follows the guest into its new pod when it live-migrates."""
    env = cloud_up
    _pod_network(env)
    created = osc(env.cloud, "server", "create", "--flavor", "m1.tiny", "--image", IMAGE,
                  "--network", "e2e-podnet", "--wait", "e2e-kv-podnet")  # fmt: skip
    sid = created["id"]
    vm = env.vm(sid)
    assert vm is not None
    assert vm["spec"]["template"]["spec"]["networks"][0]["pod"] == {}

    def shows(address: str) -> bool:
        addresses = osc(env.cloud, "server", "show", sid)["addresses"]
        return bool(addresses == {"e2e-podnet": [address]})

    first = _pod_address(env, sid)
    wait_for(lambda: shows(first), f"the server to show its pod's address {first}")
    port = osc(env.cloud, "port", "list", "--server", sid)[0]
    assert [ip["ip_address"] for ip in port["Fixed IP Addresses"]] == [first]
    source = server_status(env, sid, "ACTIVE")["OS-EXT-SRV-ATTR:host"]
    target = next(node for node in env.nodes if node != source)
    osc(env.cloud, "--os-compute-api-version", "2.30", "server", "migrate", "--live-migration",
        "--host", target, sid, "--no-output")  # fmt: skip
    moved = server_status(env, sid, "ACTIVE")
    assert moved["OS-EXT-SRV-ATTR:host"] == target, osc(env.cloud, "server", "event", "list", sid)
    second = _pod_address(env, sid)
    assert second != first
    wait_for(lambda: shows(second), f"the server to show its new pod's address {second}")
    osc(env.cloud, "server", "delete", "--wait", sid, "--no-output")
    assert osc(env.cloud, "port", "list", "--network", "e2e-podnet") == []


def test_security_groups_are_network_policies_kept_in_step(cloud_up: KubeCloud) -> None:
    """Decision 0077 end to end: a server on the pod network gets its default group as a
    NetworkPolicy before it runs; ``server add security group`` adds the group's policy (TCP
    443 from a prefix; its ICMP rule listed as not mappable), ``server remove security group``
    deletes it, the server's delete deletes the rest."""
    env = cloud_up
    _pod_network(env)
    web = osc(env.cloud, "security", "group", "create", "e2e-kv-web")["id"]
    osc(env.cloud, "security", "group", "rule", "create", "--protocol", "tcp", "--dst-port", "443",
        "--remote-ip", "10.1.0.0/16", "e2e-kv-web")  # fmt: skip
    icmp = osc(env.cloud, "security", "group", "rule", "create", "--protocol", "icmp", "e2e-kv-web")["id"]  # fmt: skip
    sid = osc(env.cloud, "server", "create", "--flavor", "m1.tiny", "--image", IMAGE,
              "--network", "e2e-podnet", "--wait", "e2e-kv-sg")["id"]  # fmt: skip
    selector = f"nova.openstack.org/server-id={sid}"

    def policies() -> dict[str, k.JsonObj]:
        found = env.client.items(k.NETWORK_POLICIES, env.namespace, selector)
        return {p["metadata"]["labels"]["nova.openstack.org/security-group-id"]: p for p in found}

    [default] = policies().values()
    assert default["spec"]["podSelector"] == {"matchLabels": {"nova.openstack.org/server-id": sid}}
    osc(env.cloud, "server", "add", "security", "group", sid, "e2e-kv-web", "--no-output")
    wait_for(lambda: web in policies(), "the group's NetworkPolicy")
    added = policies()[web]
    assert added["spec"]["ingress"] == [{"from": [{"ipBlock": {"cidr": "10.1.0.0/16"}}], "ports": [{"protocol": "TCP", "port": 443}]}]  # fmt: skip
    assert icmp in added["metadata"]["annotations"]["nova.openstack.org/unmapped-rules"]
    osc(env.cloud, "server", "remove", "security", "group", sid, "e2e-kv-web", "--no-output")
    wait_for(lambda: web not in policies(), "the group's NetworkPolicy to go")
    osc(env.cloud, "server", "delete", "--wait", sid, "--no-output")
    assert policies() == {}
    osc(env.cloud, "security", "group", "delete", "e2e-kv-web", "--no-output")


def test_change_password_of_a_server_whose_image_has_the_guest_agent(cloud_up: KubeCloud, tmp_path: Path) -> None:  # fmt: skip
    """The image's hw_qemu_guest_agent reaches the driver at boot (from the server's image_*
    system metadata): the VM gets the password credential, and changePassword writes it."""
    env = cloud_up
    disk = tmp_path / "agent.qcow2"
    disk.write_bytes(b"QFI\xfb" + bytes(508))
    image = osc(env.cloud, "image", "create", "--file", str(disk), "--disk-format", "qcow2",
                "--container-format", "bare", "--property", "hw_qemu_guest_agent=yes",
                "e2e-agent-image")  # fmt: skip
    created = osc(env.cloud, "server", "create", "--flavor", "m1.tiny", "--image", image["id"],
                  "--nic", "none", "--wait", "e2e-kv-agent")  # fmt: skip
    sid = created["id"]
    vm = env.vm(sid)
    assert vm is not None
    credentials = vm["spec"]["template"]["spec"].get("accessCredentials") or []
    assert any("userPassword" in c for c in credentials), credentials
    code, body = api(env.cloud, "POST", f"/servers/{sid}/action", {"changePassword": {"adminPass": "agent-pw"}})  # fmt: skip
    assert code == 202, body
    secret = env.client.get(k.SECRETS, f"instance-{sid}-password", env.namespace)
    assert base64.b64decode(secret["data"]["root"]) == b"agent-pw"
    osc(env.cloud, "server", "delete", "--wait", sid, "--no-output")


def test_vm_deleted_behind_our_back(cloud_up: KubeCloud) -> None:
    """An operator deletes the VirtualMachine: the VMI watch reports it and the compute host's
    power sync records what Nova's _sync_power_states does for a guest that is not found: the
    server stays ACTIVE with power state NOSTATE (nothing is stopped on a guess). Stopping it
    then works (nothing to stop) and starting it defines the VM again from the server, as
    libvirt regenerates a domain."""
    env = cloud_up
    sid = create_server(env, "e2e-kv-oob")["id"]
    env.client.delete(k.VMS, f"instance-{sid}", env.namespace, "Foreground")

    def not_found() -> k.JsonObj | None:
        code, body = api(env.cloud, "GET", f"/servers/{sid}")
        assert code == 200, body
        server: k.JsonObj = body["server"]
        return server if server["OS-EXT-STS:power_state"] == 0 else None

    server = wait_for(not_found, "the server's power state to say the guest is gone")
    assert (server["status"], server["OS-EXT-STS:task_state"]) == ("ACTIVE", None)
    wait_for(lambda: env.vm(sid) is None, "the foreground deletion to finish")
    osc(env.cloud, "server", "stop", sid, "--no-output")
    assert server_status(env, sid, "SHUTOFF")["OS-EXT-STS:power_state"] == 0
    osc(env.cloud, "server", "start", sid, "--no-output")
    server = server_status(env, sid, "ACTIVE")
    assert server["OS-EXT-STS:power_state"] == 1
    assert_vm_for(env, server)
    running_vmi(env, sid)
    osc(env.cloud, "server", "delete", "--wait", sid, "--no-output")
    assert env.vm(sid) is None and env.vmi(sid) is None
    assert owned_objects(env, sid) == {"DataVolume": [], "Secret": []}


def test_api_outage_during_spawn_is_ridden_out(cloud_up: KubeCloud) -> None:
    """The API server stops answering for a second right after the VM is created: the
    driver waits it out; the build neither fails nor leaves a second guest anywhere."""
    env = cloud_up
    env.proxy.outage_after("POST", "/virtualmachines", 1.0)
    server = create_server(env, "e2e-kv-outage")
    sid = server["id"]
    assert not env.proxy.in_outage
    assert_vm_for(env, server_status(env, sid, "ACTIVE"))
    running_vmi(env, sid)
    name = f"instance-{sid}"
    assert [c for c in env.virt_api.calls if c[1] == name] == [("start", name)]
    code, body = api(env.cloud, "GET", f"/servers/{sid}/os-instance-actions")
    assert code == 200 and len(body["instanceActions"]) == 1
    osc(env.cloud, "server", "delete", "--wait", sid, "--no-output")
    assert owned_objects(env, sid) == {"DataVolume": [], "Secret": []}


def test_failed_spawn_leaves_nothing_when_hosts_run_out(cloud_up: KubeCloud) -> None:
    """The guest fails to start on the node asked for (VMI phase Failed): the build's clean-up
    removes its VM, VMI, Secret and DataVolume before the reschedule, the reschedule finds no
    other host, and the server ends in ERROR without a host and without leftovers; deleting
    it then finds nothing behind."""
    env = cloud_up
    node = sorted(env.nodes)[0]
    env.simulator.failing_nodes = frozenset({node})
    try:
        created = osc(env.cloud, "--os-compute-api-version", "2.74", "server", "create",
                      "--flavor", "m1.tiny", "--image", IMAGE, "--nic", "none", "--host", node,
                      "e2e-kv-fails")  # fmt: skip
        sid = created["id"]

        def errored() -> k.JsonObj | None:
            code, body = api(env.cloud, "GET", f"/servers/{sid}")
            assert code == 200, body
            return body["server"] if body["server"]["status"] == "ERROR" else None

        server = wait_for(errored, f"server {sid} to fail")
    finally:
        env.simulator.failing_nodes = frozenset()
    assert server["OS-EXT-SRV-ATTR:host"] is None
    assert env.vm(sid) is None and env.vmi(sid) is None
    assert owned_objects(env, sid) == {"DataVolume": [], "Secret": []}
    osc(env.cloud, "server", "delete", "--wait", sid, "--no-output")


def test_what_a_deleted_server_left_is_reaped(cloud_up: KubeCloud) -> None:
    """A Secret of a deleted server on one of our nodes (a delete that could not reach the
    cluster, a server deleted without a host) is removed by that node's compute host
    (running_deleted_instance_action = reap)."""
    env = cloud_up
    server = create_server(env, "e2e-kv-reap")
    sid, node = server["id"], server_status(env, server["id"], "ACTIVE")["OS-EXT-SRV-ATTR:host"]
    osc(env.cloud, "server", "delete", "--wait", sid, "--no-output")
    labels = {"nova.openstack.org/server-id": sid, "nova.openstack.org/node": node,
              "app.kubernetes.io/managed-by": "openkeel"}  # fmt: skip
    name = f"instance-{sid}-cloudinit"
    env.client.create(k.SECRETS, {"metadata": {"name": name, "namespace": env.namespace, "labels": labels}})  # fmt: skip
    wait_for(lambda: env.client.get_or_none(k.SECRETS, name, env.namespace) is None, "the leftover to be reaped")  # fmt: skip


def _compute_service(env: KubeCloud, host: str) -> k.JsonObj | None:
    code, body = api(env.cloud, "GET", f"/os-services?binary=nova-compute&host={host}")
    assert code == 200, body
    return body["services"][0] if body["services"] else None


def _service_state(env: KubeCloud, host: str, state: str) -> k.JsonObj | None:
    found = _compute_service(env, host)
    return found if found is not None and found["state"] == state else None


def test_nodes_join_and_leave_while_running(cloud_up: KubeCloud) -> None:
    """A Node that appears becomes a compute host without a restart; a Node that is lost
    (Ready Unknown, virt-controller marks it unschedulable and fails its VMIs) stops its host:
    the service goes down and its server is settled (never left in a task). The server is then
    evacuated: the same VirtualMachine is taken over by another node's host and runs there.
    When the lost Node comes back its host starts again, leaves the taken-over VM alone and
    completes the evacuation."""
    env = cloud_up
    prefix = next(iter(env.nodes)).rsplit("node-", 1)[0]
    node = f"{prefix}node-c"
    kube_env.ensure_node(env.client, node, cpu="8", memory="32Gi", zone="az-e2e-c")
    env.nodes[node] = "az-e2e-c"  # deleted with the others at the end
    wait_for(lambda: _service_state(env, node, "up"), f"a compute host for the new node {node}")
    wait_for(lambda: _hypervisors_up(env), "the new node as a hypervisor")
    created = osc(env.cloud, "--os-compute-api-version", "2.74", "server", "create",
                  "--flavor", "m1.tiny", "--image", IMAGE, "--nic", "none", "--host", node,
                  "--wait", "e2e-kv-node-c")  # fmt: skip
    sid = created["id"]
    assert server_status(env, sid, "ACTIVE")["OS-EXT-SRV-ATTR:host"] == node

    env.simulator.lose_node(node)
    wait_for(lambda: _service_state(env, node, "down"), f"the service of lost node {node} to go down")  # fmt: skip

    def settled() -> k.JsonObj | None:
        code, body = api(env.cloud, "GET", f"/servers/{sid}")
        assert code == 200, body
        server: k.JsonObj = body["server"]
        return server if server["OS-EXT-STS:task_state"] is None else None

    # Nova leaves a down host's servers as they were; the VMI watch may have stopped it first
    assert wait_for(settled, "the server to have no task")["status"] in ("ACTIVE", "SHUTOFF")
    code, body = api(env.cloud, "POST", f"/servers/{sid}/action", {"evacuate": {}})
    assert code == 200, body
    # the raw helper speaks 2.96: from 2.95 an evacuated server ends stopped
    evacuated = server_status(env, sid, "SHUTOFF")
    target = evacuated["OS-EXT-SRV-ATTR:host"]
    assert target in env.nodes and target != node
    osc(env.cloud, "server", "start", sid, "--no-output")
    vm = assert_vm_for(env, server_status(env, sid, "ACTIVE"))
    assert vm["metadata"]["labels"]["nova.openstack.org/node"] == target
    assert running_vmi(env, sid)["status"]["nodeName"] == target

    kube_env.ensure_node(env.client, node, cpu="8", memory="32Gi", zone="az-e2e-c")  # back
    env.client.patch(k.NODES, node, {"metadata": {"labels": {"kubevirt.io/schedulable": "true"}}})  # fmt: skip
    wait_for(lambda: _service_state(env, node, "up"), f"the compute host of {node} to return")

    def completed() -> bool:  # the returning host registers first, then cleans up
        code, body = api(env.cloud, "GET", f"/os-migrations?instance_uuid={sid}")
        assert code == 200, body
        return [m["status"] for m in body["migrations"]] == ["completed"]

    wait_for(completed, "the returning host to complete the evacuation")
    assert running_vmi(env, sid)["status"]["nodeName"] == target  # the returning host left it
    osc(env.cloud, "server", "delete", "--wait", sid, "--no-output")
    assert env.vm(sid) is None and not any(owned_objects(env, sid).values())


OUTAGE = 1.5  # seconds the API server does not answer, right after the request named


def _no_leftovers(env: KubeCloud, sid: str) -> None:
    assert env.vm(sid) is None and env.vmi(sid) is None
    assert owned_objects(env, sid) == {"DataVolume": [], "Secret": []}


@pytest.mark.parametrize(
    ("method", "suffix"),
    [
        ("POST", "/namespaces"),
        ("POST", "/secrets"),
        ("POST", "/virtualmachines"),
        ("PUT", "/start"),
    ],
)
def test_api_cut_at_each_spawn_step(cloud_up: KubeCloud, method: str, suffix: str) -> None:
    """Every step of a build, cut off: the server ends ACTIVE with one guest, never in BUILD."""
    env = cloud_up
    env.proxy.outage_after(method, suffix, OUTAGE)
    sid = create_server(env, f"e2e-kv-cut-{suffix.strip('/')}")["id"]
    assert_vm_for(env, server_status(env, sid, "ACTIVE"))
    running_vmi(env, sid)
    osc(env.cloud, "server", "delete", "--wait", sid, "--no-output")
    _no_leftovers(env, sid)


@pytest.mark.parametrize(("method", "suffix"), [("DELETE", "/virtualmachines"), ("DELETE", "/secrets")])  # fmt: skip
def test_api_cut_at_each_delete_step(cloud_up: KubeCloud, method: str, suffix: str) -> None:
    env = cloud_up
    sid = create_server(env, "e2e-kv-cut-delete")["id"]
    env.proxy.outage_after(method, suffix if suffix != "/virtualmachines" else f"/instance-{sid}", OUTAGE)  # fmt: skip
    osc(env.cloud, "server", "delete", "--wait", sid, "--no-output")
    _no_leftovers(env, sid)


@pytest.mark.parametrize(
    ("method", "suffix"),
    [("PUT", "/virtualmachines/"), ("POST", "/virtualmachineinstancemigrations")],
)
def test_api_cut_at_each_live_migration_step(cloud_up: KubeCloud, method: str, suffix: str) -> None:
    """The pin update and the migration request, each cut off: the server ends ACTIVE on the
    destination (or, had the driver given up, back on the source), never MIGRATING."""
    env = cloud_up
    sid = create_server(env, "e2e-kv-cut-migrate")["id"]
    source = server_status(env, sid, "ACTIVE")["OS-EXT-SRV-ATTR:host"]
    target = next(node for node in sorted(env.nodes) if node != source and _service_state(env, node, "up"))  # fmt: skip
    env.proxy.outage_after(method, suffix if method == "POST" else f"/instance-{sid}", OUTAGE)
    osc(env.cloud, "--os-compute-api-version", "2.30", "server", "migrate", "--live-migration",
        "--host", target, sid, "--no-output")  # fmt: skip
    server = server_status(env, sid, "ACTIVE")
    assert server["OS-EXT-SRV-ATTR:host"] == target
    vmi = running_vmi(env, sid)
    assert vmi["status"]["nodeName"] == target and vmi["spec"]["nodeSelector"] == {k.HOSTNAME_LABEL: target}  # fmt: skip
    osc(env.cloud, "server", "delete", "--wait", sid, "--no-output")
    _no_leftovers(env, sid)


def test_rescue_password_and_crash_dump(cloud_up: KubeCloud, spare_server: str) -> None:
    """rescue boots a rescue disk first with the server's disks kept, unrescue restores the
    VM; changePassword needs the guest agent credential (409 without, as Nova); KubeVirt has no
    NMI, so trigger_crash_dump is accepted and ends in an Error event (issue 11)."""
    env, sid = cloud_up, spare_server
    vm = env.vm(sid)
    assert vm is not None
    disks_before = [d["name"] for d in vm["spec"]["template"]["spec"]["domain"]["devices"]["disks"]]
    osc(env.cloud, "server", "rescue", "--password", "rescue-pw", sid, "--no-output")
    assert server_status(env, sid, "RESCUE")["OS-EXT-STS:power_state"] == 1
    rescued = env.vm(sid)
    assert rescued is not None
    disks = rescued["spec"]["template"]["spec"]["domain"]["devices"]["disks"]
    assert [d["name"] for d in disks] == ["rescue", *disks_before]
    assert disks[0]["bootOrder"] == 1
    osc(env.cloud, "server", "unrescue", sid, "--no-output")
    server_status(env, sid, "ACTIVE")
    back = env.vm(sid)
    assert back is not None
    assert [d["name"] for d in back["spec"]["template"]["spec"]["domain"]["devices"]["disks"]] == disks_before  # fmt: skip
    code, body = api(env.cloud, "POST", f"/servers/{sid}/action", {"changePassword": {"adminPass": "x"}})  # fmt: skip
    assert (code, body["conflictingRequest"]["message"]) == (409, "Guest agent is not enabled for the instance")  # fmt: skip
    code, _ = api(env.cloud, "POST", f"/servers/{sid}/action", {"trigger_crash_dump": None})
    assert code == 202

    def crash_dump_event() -> str | None:
        events = osc(env.cloud, "server", "event", "list", sid)
        found = [e for e in events if e["Action"] == "trigger_crash_dump"]
        if not found:
            return None
        shown = osc(env.cloud, "server", "event", "show", sid, found[0]["Request ID"])
        results = [e.get("result") for e in shown.get("events") or []]
        return results[0] if results and results[0] else None

    assert wait_for(crash_dump_event, "the crash dump event") == "Error"
    assert server_status(env, sid, "ACTIVE")["OS-EXT-STS:power_state"] == 1


def volume_status(env: KubeCloud, volume_id: str) -> str:
    status: str = osc(env.cloud, "volume", "show", volume_id)["status"]
    return status


def test_snapshot_uploads_the_exported_disk_and_boots(cloud_up: KubeCloud, tmp_path: Path) -> None:  # fmt: skip
    """createImage on KubeVirt (decision 0071): the VM snapshot's root volume is exported
    (VirtualMachineExport, token Secret), downloaded over HTTPS and stored by the image service;
    the export is deleted; a server boots from the image (its DataSource)."""
    env = cloud_up
    source = create_server(env, "e2e-kv-snap-src")
    image = osc(env.cloud, "server", "image", "create", "--name", "e2e-kv-snap", "--wait", source["id"])  # fmt: skip
    assert image["status"] == "active"
    shown = osc(env.cloud, "image", "show", "e2e-kv-snap")
    assert shown["size"] == sim_export.DISK_SIZE
    images_ns = f"{env.namespace.removesuffix(PROJECT)}images"
    assert (
        shown["properties"]["openkeel_kubevirt_data_source"] == f"{images_ns}/image-{shown['id']}"
    )
    saved = tmp_path / "snap.img"
    osc(env.cloud, "image", "save", "--file", str(saved), "e2e-kv-snap", "--no-output")
    root_claim = f"instance-{source['id']}-root"
    assert saved.read_bytes() == sim_export.disk_bytes(env.namespace, root_claim)
    assert env.client.items(k.VM_EXPORTS, env.namespace) == []  # deleted after the download
    path, status, _size = env.simulator.exports.downloads[-1]
    assert status == "200"
    assert path.endswith(f"/export-{shown['id']}/volumes/snapshot-{shown['id']}-root/disk.img.gz")
    booted = osc(env.cloud, "server", "create", "--image", "e2e-kv-snap", "--flavor", "m1.tiny",
                 "--nic", "none", "--wait", "e2e-kv-from-snap")  # fmt: skip
    assert booted["status"] == "ACTIVE"
    root = env.client.get(k.DATA_VOLUMES, f"instance-{booted['id']}-root", env.namespace)
    assert root["spec"]["sourceRef"]["name"] == f"image-{shown['id']}"
    for server in (booted, source):
        osc(env.cloud, "server", "delete", "--wait", server["id"], "--no-output")
    osc(env.cloud, "image", "delete", "e2e-kv-snap", "--no-output")


def test_snapshot_whose_export_never_gets_ready(cloud_up: KubeCloud) -> None:
    """An export that stays Pending ([kubevirt] export_ready_timeout = 3): the snapshot fails,
    its image is deleted, the server is ACTIVE again with no task, the action's event failed,
    and no export or token Secret is left."""
    env = cloud_up
    # (under load a host may miss the 4 s service_down_time after the previous test)
    wait_for(lambda: _hypervisors_up(env), "one hypervisor per node")
    server = create_server(env, "e2e-kv-snap-stuck")
    env.simulator.exports.ready = False
    try:
        code, body = api(env.cloud, "POST", f"/servers/{server['id']}/action",
                         {"createImage": {"name": "e2e-kv-stuck"}})  # fmt: skip
        assert code == 202, body
        image_id = body["image_id"]

        def failed() -> bool:
            events = _snapshot_events(env, server["id"])
            return bool(events) and events[0].get("result") == "Error"

        wait_for(failed, "the snapshot to fail", timeout=60)
    finally:
        env.simulator.exports.ready = True
    server_status(env, server["id"], "ACTIVE")
    assert image_id not in {i["ID"] for i in osc(env.cloud, "image", "list")}
    assert env.client.items(k.VM_EXPORTS, env.namespace) == []
    assert env.client.get_or_none(k.SECRETS, f"export-token-{image_id}", env.namespace) is None
    osc(env.cloud, "server", "delete", "--wait", server["id"], "--no-output")


def _snapshot_events(env: KubeCloud, server_id: str) -> list[k.JsonObj]:
    code, body = api(env.cloud, "GET", f"/servers/{server_id}/os-instance-actions")
    assert code == 200, body
    actions = [a for a in body["instanceActions"] if a["action"] == "createImage"]
    if not actions:
        return []
    path = f"/servers/{server_id}/os-instance-actions/{actions[0]['request_id']}"
    code, body = api(env.cloud, "GET", path)
    assert code == 200, body
    events: list[k.JsonObj] = body["instanceAction"].get("events", [])
    return events


def test_volume_add_remove_and_a_cluster_without_hot_plug(
    cloud_up: KubeCloud, spare_server: str
) -> None:
    """`server add volume` on KubeVirt (decision 0067): the volume service answers the host's
    kubevirt connector with the volume's DataVolume, the driver makes it and hot-plugs it, the
    volume is in-use once the VMI says Ready; `server remove volume` unplugs it. Without the
    HotplugVolumes feature gate the attach fails on the host: the volume is available again."""
    env, sid = cloud_up, spare_server
    vid: str = osc(env.cloud, "volume", "create", "--size", "1", "e2e-kv-vol")["id"]
    wait_for(lambda: volume_status(env, vid) == "available" or None, "volume available")
    claim = f"volume-{vid}"
    osc(env.cloud, "server", "add", "volume", sid, vid, "--no-output")
    wait_for(lambda: volume_status(env, vid) == "in-use" or None, "volume in-use")
    dv = env.client.get(k.DATA_VOLUMES, claim, env.namespace)
    assert dv["metadata"]["annotations"]["nova.openstack.org/volume-id"] == vid
    ready = [s for s in running_vmi(env, sid)["status"]["volumeStatus"] if s["name"] == claim]
    assert [s["phase"] for s in ready] == ["Ready"]
    osc(env.cloud, "server", "remove", "volume", sid, vid, "--no-output")
    wait_for(lambda: volume_status(env, vid) == "available" or None, "volume available again")
    assert all(s["name"] != claim for s in running_vmi(env, sid)["status"].get("volumeStatus", []))  # fmt: skip
    env.virt_api.hotplug.enabled = False
    try:
        osc(env.cloud, "server", "add", "volume", sid, vid, "--no-output")
        wait_for(lambda: volume_status(env, vid) == "available" or None, "attach undone")
        assert osc(env.cloud, "server", "volume", "list", sid) == []
    finally:
        env.virt_api.hotplug.enabled = True
    assert server_status(env, sid, "ACTIVE")
    # `volume create --source` (issue 13, decision 0077): a CDI clone of the volume's DataVolume
    copy: str = osc(env.cloud, "volume", "create", "--source", vid, "--size", "2", "e2e-kv-copy")["id"]  # fmt: skip
    wait_for(lambda: volume_status(env, copy) == "available" or None, "the copy available")
    cloned = env.client.get(k.DATA_VOLUMES, f"volume-{copy}", env.namespace)["spec"]
    assert cloned["source"] == {"pvc": {"namespace": env.namespace, "name": claim}}
    assert cloned["storage"]["resources"] == {"requests": {"storage": "2Gi"}}
    osc(env.cloud, "volume", "delete", copy, "--no-output")
    osc(env.cloud, "volume", "delete", vid, "--no-output")
    # the volume service deletes the volume's DataVolume with it (decision 0071)
    assert env.client.get_or_none(k.DATA_VOLUMES, claim, env.namespace) is None
    assert env.client.get_or_none(k.DATA_VOLUMES, f"volume-{copy}", env.namespace) is None
