"""The KubeVirt driver with exactly the RBAC of deploy/kubernetes/rbac.yaml (issue 9 item 7).

The manifest is applied to the real kube-apiserver (RBAC authorization on); the driver then
runs every operation with a kubeconfig holding a token of the manifest's ServiceAccount (from
the TokenRequest API: the server signs ServiceAccount tokens, no controller needed), so the
API server authenticates the ServiceAccount and authorizes each request against that
ClusterRole and nothing else. A request outside the manifest is refused (403).

Every request the ServiceAccount's client sends is recorded with its answer: none may be
refused (a driver path that swallows errors, as ``host_up`` or the console log do, would hide
a 403), and every rule of the manifest must be used by some driver operation here, or be
named with the reason it is not: the manifest is minimal as well as sufficient.

The test-side virt-api stand-in acts with its own (admin) rights, as virt-api does; that the
ServiceAccount may call each virt-api subresource the real HttpVirtApi uses, and no other, is
checked with SubjectAccessReviews derived from HttpVirtApi itself, so a new call the manifest
lacks fails here.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, NamedTuple

import httpx
import pytest
import yaml

from openkeel.cmd import preflight
from openkeel.domain.states import PowerState
from openkeel.virt.kubevirt import client as k
from openkeel.virt.kubevirt.driver import KubevirtDriver
from openkeel.virt.kubevirt.manifests import naming
from openkeel.virt.kubevirt.nodes import NodeWatch, node_names
from openkeel.virt.kubevirt.virtapi import HttpVirtApi
from openkeel.virt.model import (
    DiskTransfer,
    FlavorSpec,
    ImageSpec,
    InstanceRef,
    InstanceSpec,
    MigrationRef,
    NetworkInterface,
    PortSecurity,
    RebootType,
    SnapshotTarget,
    VolumeAttachment,
)
from tests import leaks
from tests.virt.kubevirt import kube_env, sim_export
from tests.virt.kubevirt.kube_env import KubeSession

MANIFEST = Path(__file__).resolve().parents[3] / "deploy" / "kubernetes" / "rbac.yaml"
GROUPS = ("system:serviceaccounts", "system:serviceaccounts:openkeel", "system:authenticated")
SMALL = FlavorSpec("1", "m1.small", vcpus=1, memory_mb=512, root_gb=1)
LARGE = FlavorSpec("2", "m1.large", vcpus=2, memory_mb=1024, root_gb=2)

RBAC = "rbac.authorization.k8s.io"
SERVICE_ACCOUNTS = k.Resource("", "v1", "serviceaccounts", "ServiceAccount")
KINDS = {
    "Namespace": k.NAMESPACES,
    "ServiceAccount": SERVICE_ACCOUNTS,
    "ClusterRole": k.Resource(RBAC, "v1", "clusterroles", "ClusterRole", namespaced=False),
    "ClusterRoleBinding": k.Resource(
        RBAC, "v1", "clusterrolebindings", "ClusterRoleBinding", namespaced=False
    ),
}
REVIEWS = k.Resource("authorization.k8s.io", "v1", "subjectaccessreviews", "SubjectAccessReview", namespaced=False)  # fmt: skip


class Access(NamedTuple):
    """What RBAC authorizes a request as: API group, resource[/subresource], verb."""

    group: str
    resource: str
    verb: str


_VERBS = {"POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}


def access_of(request: httpx.Request) -> Access | None:
    """The RBAC attributes of a resource request (None for /readyz and other non-resource
    paths), as the API server's request-info resolver derives them."""
    parts = request.url.path.strip("/").split("/")
    if parts[0] == "api":
        group, rest = "", parts[2:]
    elif parts[0] == "apis":
        group, rest = parts[1], parts[3:]
    else:
        return None
    if len(rest) >= 3 and rest[0] == "namespaces":
        rest = rest[2:]  # a namespaced collection: /namespaces/<ns>/<resource>...
    resource = rest[0] + (f"/{rest[2]}" if len(rest) > 2 else "")
    verb = _VERBS.get(request.method)
    if verb == "delete" and len(rest) == 1:
        verb = "deletecollection"
    if verb is None:
        watching = request.url.params.get("watch") == "true"
        verb = "watch" if watching else "get" if len(rest) > 1 else "list"
    return Access(group, resource, verb)


def manifest_rules() -> set[Access]:
    """The ClusterRole's rules, one Access per (group, resource, verb)."""
    (role,) = [d for d in yaml.safe_load_all(MANIFEST.read_text()) if d["kind"] == "ClusterRole"]
    return {
        Access(group, resource, verb)
        for rule in role["rules"]
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for verb in rule["verbs"]
    }


# Rules of the manifest that test_every_operation_with_the_manifest_rbac does not reach, and why
# they are there. The virt-api subresources are checked by SubjectAccessReview instead.
NOT_EXERCISED: dict[Access, str] = {
    Access("", "persistentvolumes", "get"): "ensure reads a static PV only when an earlier "
    "try of the same attachment made it already",
}


class Recording(k.KubeClient):
    """The driver's client, recording each resource request with the status of its answer
    (watches included: they get connections of their own from _new_http)."""

    def __init__(self, config: k.KubeConfig, timeout: float = 30.0) -> None:
        self.seen: list[tuple[Access, int]] = []
        super().__init__(config, timeout)

    def _new_http(self, limits: httpx.Limits) -> httpx.Client:
        http = super()._new_http(limits)
        http.event_hooks = {"request": [], "response": [self._record]}
        return http

    def _record(self, response: httpx.Response) -> None:
        found = access_of(response.request)
        if found is not None:
            self.seen.append((found, response.status_code))


@dataclass(frozen=True)
class Applied:
    """The manifest as applied for one test run: its ServiceAccount's user name and a
    kubeconfig holding a token of it."""

    account: str
    kubeconfig: str


def manifest_for(run: str) -> list[k.JsonObj]:
    """The manifest's objects with the ServiceAccount, ClusterRole and binding named for one
    run: concurrent runs on one API server (other worktrees, maybe other manifests) never
    rewrite each other's ClusterRole. The binding must tie the manifest's own role to its own
    ServiceAccount."""
    docs = list(yaml.safe_load_all(MANIFEST.read_text()))
    names = {d["kind"]: d["metadata"]["name"] for d in docs}
    for doc in docs:
        if doc["kind"] == "ClusterRoleBinding":
            assert doc["roleRef"] == {"apiGroup": RBAC, "kind": "ClusterRole", "name": names["ClusterRole"]}  # fmt: skip
            account = {"kind": "ServiceAccount", "name": names["ServiceAccount"], "namespace": "openkeel"}  # fmt: skip
            assert doc["subjects"] == [account]
            doc["roleRef"]["name"] += run
            doc["subjects"][0]["name"] += run
        if doc["kind"] != "Namespace":
            doc["metadata"]["name"] += run
    return docs


def _apply(admin: k.KubeClient, docs: list[k.JsonObj]) -> None:
    for doc in docs:
        res, ns = KINDS[doc["kind"]], doc["metadata"].get("namespace")
        if doc["kind"] == "Namespace":
            admin.ensure(res, doc)
        else:
            admin.create(res, doc, ns)


def _remove(admin: k.KubeClient, docs: list[k.JsonObj]) -> None:
    """The run's objects, binding first (the Namespace stays: no namespace controller)."""
    for doc in reversed(docs):
        if doc["kind"] != "Namespace":
            admin.delete(KINDS[doc["kind"]], doc["metadata"]["name"], doc["metadata"].get("namespace"))  # fmt: skip


def _token(admin: k.KubeClient, account: str) -> str:
    """A bound token of the ServiceAccount (TokenRequest, as the kubelet gets for a pod)."""
    request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": 3600}}  # fmt: skip
    answer = admin.request("POST", SERVICE_ACCOUNTS.path("openkeel", account, "token"), request)
    token: str = answer["status"]["token"]
    return token


@pytest.fixture(scope="module")
def applied(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Applied]:
    """The manifest applied (named for this run) and a kubeconfig of its ServiceAccount."""
    kube = kube_env.session()
    docs = manifest_for("-" + kube.prefix.rstrip("-"))
    (account,) = [d["metadata"]["name"] for d in docs if d["kind"] == "ServiceAccount"]
    _apply(kube.client, docs)
    try:
        admin = kube.client.config
        config = {
            "apiVersion": "v1", "kind": "Config", "current-context": "openkeel-compute",
            "clusters": [{"name": "test", "cluster": {"server": admin.server, "certificate-authority": admin.ca_file}}],
            "users": [{"name": "openkeel-compute", "user": {"token": _token(kube.client, account)}}],
            "contexts": [{"name": "openkeel-compute", "context": {"cluster": "test", "user": "openkeel-compute"}}],
        }  # fmt: skip
        path = tmp_path_factory.mktemp("rbac") / "kubeconfig"
        path.write_text(yaml.safe_dump(config))
        yield Applied(f"system:serviceaccount:openkeel:{account}", str(path))
    finally:
        _remove(kube.client, docs)


@pytest.fixture(scope="module")
def sa_client(applied: Applied) -> Iterator[Recording]:
    client = Recording(k.KubeConfig.load(applied.kubeconfig), timeout=10.0)
    owner = leaks.owned_by("the module's ServiceAccount client", leaks.kube_client_sockets(client))
    yield client
    client.close()
    leaks.released(owner)


def _driver(kube: KubeSession, client: k.KubeClient, host: str, prefix: str, **kw: Any) -> KubevirtDriver:  # fmt: skip
    if kube.client.get_or_none(k.NODES, prefix + host) is None:
        kube_env.ensure_node(kube.client, prefix + host)
    driver = KubevirtDriver(client, kube.settings, kube.virt_api, node_for_host=lambda h: prefix + h,
                            wait_timeout=60.0, poll_interval=0.01, **kw)  # fmt: skip
    driver.init_host(host)
    return driver


PORT = NetworkInterface("p-1", "n-1", "fa:16:3e:00:00:01", ("10.0.0.3",))
IMAGE = ImageSpec("155d900f-4e14-4e4c-a73d-069cbf4541e6", disk_format="qcow2")


def _spec() -> InstanceSpec:
    server_id = str(uuid.uuid4())
    ref = InstanceRef(server_id, f"instance-{server_id[:8]}", "project-rbac")
    return InstanceSpec(ref, "vm1", "user-1", SMALL, IMAGE, network=(PORT,), user_data="aGk=")


def test_every_operation_with_the_manifest_rbac(sa_client: Recording, applied: Applied) -> None:
    kube = kube_env.session()
    prefix = kube.node_prefix()
    sa_client.seen.clear()
    preflight.check_kubeconfig(applied.kubeconfig)  # openkeel compute's start-up check passes
    source = _driver(kube, sa_client, "host-a", prefix, watch_events=True)
    dest = _driver(kube, sa_client, "host-b", prefix)
    try:
        assert source.host_up() and source.get_available_resource(source.node).vcpus == 16
        assert source.availability_zone(source.node) is None
        assert f"{prefix}host-a" in node_names(sa_client, "kubevirt.io/schedulable=true")
        # an image with the guest agent: its password Secret is updated by changePassword
        spec = replace(_spec(), image=replace(IMAGE, properties={"hw_qemu_guest_agent": "yes"}))
        source.spawn(spec)
        source.reboot(spec.ref, RebootType.SOFT)
        source.reboot(spec.ref, RebootType.HARD)
        source.pause(spec.ref)
        source.unpause(spec.ref)
        source.suspend(spec.ref)
        source.resume(spec)
        source.power_off(spec.ref)
        source.power_on(spec)
        migration = MigrationRef(1, "host-a", "host-a", "n", "n")
        source.migrate_disk_and_power_off(spec, "host-a", LARGE)
        source.finish_migration(migration, replace(spec, flavor=LARGE), DiskTransfer(spec.uuid), resize_instance=True)  # fmt: skip
        source.finish_revert_migration(migration, spec)
        source.migrate_disk_and_power_off(spec, "host-a", LARGE)
        source.finish_migration(migration, replace(spec, flavor=LARGE), DiskTransfer(spec.uuid), resize_instance=True)  # fmt: skip
        source.confirm_migration(migration, spec.ref)
        blank = {"driver_volume_type": "kubevirt", "data": {"claim_kind": "dataVolume", "size_gb": 1,
                                                            "populate": {"blank": {}}}}  # fmt: skip
        source.attach_volume(spec.ref, VolumeAttachment("vol-1", "/dev/sdb", blank))
        source.detach_volume(spec.ref, "vol-1")
        # a real Cinder's iSCSI volume with CHAP: its Secret, static PV and claim, then gone
        iscsi = {"driver_volume_type": "iscsi", "attachment_id": "att-2", "size_gb": 1,
                 "data": {"target_portal": "10.0.0.1:3260", "target_iqn": "iqn.2010-10.org.openstack:volume-2",
                          "target_lun": 1, "auth_method": "CHAP", "auth_username": "u",
                          "auth_password": "p"}}  # fmt: skip
        source.attach_volume(spec.ref, VolumeAttachment("vol-2", "/dev/sdc", iscsi))
        source.detach_volume(spec.ref, "vol-2")
        # security groups of a pod-network port: NetworkPolicies made, updated, deleted
        source.settings = replace(source.settings, network_mappings={"n-pod": "pod"})
        pod_port = [replace(PORT, port_id="p-pod", network_id="n-pod")]
        rules = [{"id": "r", "direction": "ingress", "ethertype": "IPv4", "protocol": "tcp"}]
        for found in ([], rules):
            source.refresh_security_groups(spec.ref, pod_port, PortSecurity({"p-pod": ("g",)}, {"g": {"id": "g", "security_group_rules": found}}))  # fmt: skip
        source.refresh_security_groups(spec.ref, pod_port, PortSecurity())
        source.attach_interface(spec.ref, replace(PORT, port_id="p-2", mac_address="fa:16:3e:00:00:02"))  # fmt: skip
        source.detach_interface(spec.ref, "p-2")
        source.rescue(spec, IMAGE, None)
        source.unrescue(spec.ref)
        source.set_admin_password(spec.ref, "n3w-pw")  # the agent's password Secret: update
        assert source.get_instance_diagnostics(spec.ref).num_cpus == 2
        assert source.get_diagnostics(spec.ref)["vcpus"] == 2
        assert " up " in source.get_host_uptime()
        source.live_migration(spec.ref, "host-b", lambda _p: None)
        dest.post_live_migration_at_destination(spec)
        assert dest.list_instance_uuids() == [spec.uuid]
        assert dest.get_info(spec.ref).state == PowerState.RUNNING
        _console_output(kube, sa_client, dest, spec)
        target = SnapshotTarget(str(uuid.uuid4()), "snap")
        dest.snapshot(spec.ref, target, lambda *_a: None)
        taken = dest.snapshot(
            spec.ref, target, lambda *_a: None
        )  # retried: finds what the first made
        assert taken.chunks is not None and len(b"".join(taken.chunks)) == sim_export.DISK_SIZE
        # The image deleted: the image cache pass lists and deletes what the cluster kept.
        assert dest.manage_image_cache(lambda image_id: image_id == target.image_id) == [target.image_id]  # fmt: skip
        assert dest.list_leftover_uuids() == []
        # The VM deleted behind the driver's back: power on defines it again, over the
        # Secrets still there; a DataVolume a failed build left behind goes with destroy.
        ns, name = dest._ns(spec.ref), naming.vm_name(spec.uuid)
        kube.client.delete(k.VMS, name, ns, "Foreground")
        dest._wait_for(lambda: kube.client.get_or_none(k.VMS, name, ns) is None, "the VM going")
        dest.power_on(spec)
        left = {"metadata": {"name": f"{name}-left", "namespace": ns, "labels": {naming.LABEL_SERVER_ID: spec.uuid}},
                "spec": {"source": {"blank": {}}, "storage": {}}}  # fmt: skip
        kube.client.create(k.DATA_VOLUMES, left)
        dest.destroy(spec.ref)
        assert not dest.instance_exists(spec.ref)
        assert kube.client.items(k.DATA_VOLUMES, ns, naming.server_selector(spec.uuid)) == []
        _abort_a_migration(kube, source)
        joined: list[str] = []
        watch = NodeWatch(sa_client, "kubevirt.io/schedulable=true", joined.append, lambda _n: None).start()  # fmt: skip
        try:
            assert watch.synced.wait(10)
        finally:
            watch.stop()
        assert f"{prefix}host-a" in joined
    finally:
        source.cleanup_host("host-a")
        dest.cleanup_host("host-b")
    refused = sorted({access for access, status in sa_client.seen if status in (401, 403)})
    assert refused == [], f"refused (a driver path hid it): {refused}"
    used = {access for access, _status in sa_client.seen}
    rules = {r for r in manifest_rules() if r.group != "subresources.kubevirt.io"}
    assert set(NOT_EXERCISED) <= rules
    unused = sorted(rules - used - set(NOT_EXERCISED))
    assert unused == [], f"manifest rules no driver operation used (remove, or say why): {unused}"  # fmt: skip


def _abort_a_migration(kube: KubeSession, driver: KubevirtDriver) -> None:
    """live_migration_abort as the ServiceAccount. The simulator ends every migration it sees,
    so this one is in a namespace it does not watch: a VM and a migration in progress, as
    KubeVirt would show them, made by the admin."""
    spec = _spec()
    driver.settings = replace(kube.settings, namespace_scheme=f"rbac-{kube.prefix}{{project_id}}")
    ns, name = driver._ns(spec.ref), naming.vm_name(spec.uuid)
    labels = {naming.LABEL_SERVER_ID: spec.uuid}
    kube.client.ensure_namespace(ns)
    kube.client.create(k.VMS, {"metadata": {"name": name, "labels": labels},
                               "spec": {"template": {"spec": {"domain": {"devices": {}}}}}}, ns)  # fmt: skip
    vmim = kube.client.create(k.MIGRATIONS, {"metadata": {"generateName": "migrate-", "labels": labels}, "spec": {"vmiName": name}}, ns)  # fmt: skip
    try:
        driver.live_migration_abort(spec.ref)
        assert kube.client.get_or_none(k.MIGRATIONS, vmim["metadata"]["name"], ns) is None
    finally:
        driver.settings = kube.settings
        kube.client.delete(k.VMS, name, ns)


def _console_output(kube: KubeSession, client: k.KubeClient, driver: KubevirtDriver, spec: InstanceSpec) -> None:  # fmt: skip
    """The real HttpVirtApi's console log as the ServiceAccount: it finds the virt-launcher
    Pod and asks for its log (the bare API server has no kubelet: no log, but authorized)."""
    ns, name = driver._ns(spec.ref), naming.vm_name(spec.uuid)
    containers = [{"name": c, "image": "virt-launcher"} for c in ("compute", "guest-console-log")]
    pod = f"virt-launcher-{name}"
    kube.client.create(k.PODS, {"metadata": {"name": pod, "labels": {"kubevirt.io/domain": name}},
                                "spec": {"containers": containers}}, ns)  # fmt: skip
    try:
        assert HttpVirtApi(client).console_log(ns, name) == ""
    finally:
        kube.client.delete(k.PODS, pod, ns)


def test_the_manifest_is_what_is_in_force(sa_client: k.KubeClient, applied: Applied) -> None:
    kube = kube_env.session()
    node = kube.node_prefix() + "n"
    kube_env.ensure_node(kube.client, node)
    with pytest.raises(k.KubeError) as refused:
        sa_client.delete(k.NODES, node)
    assert refused.value.status == 403
    # the token is the ServiceAccount's: the API server names it as the one refused
    assert f'User "{applied.account}" cannot delete resource "nodes"' in refused.value.message
    with pytest.raises(k.KubeError) as refused:
        sa_client.items(KINDS["ClusterRole"])
    assert refused.value.status == 403
    assert kube.client.get_or_none(k.NODES, node) is not None


def test_the_manifest_names_everything() -> None:
    """No wildcard: every group, resource and verb is one the driver uses (checked above)."""
    rules = manifest_rules()
    assert rules and all("*" not in (rule.group, rule.resource, rule.verb) for rule in rules)
    (role,) = [d for d in yaml.safe_load_all(MANIFEST.read_text()) if d["kind"] == "ClusterRole"]
    assert all(set(rule) == {"apiGroups", "resources", "verbs"} for rule in role["rules"])


class _Recorder(HttpVirtApi):
    """HttpVirtApi that records the paths it would PUT instead of sending them."""

    def __init__(self) -> None:
        self.paths: list[str] = []

    def _put(self, namespace: str, kind: str, name: str, action: str, body: k.JsonObj) -> None:
        self.paths.append(f"{kind}/{action}")


def test_every_virt_api_subresource_is_allowed(applied: Applied) -> None:
    kube = kube_env.session()
    recorder = _Recorder()
    ns = "project-rbac"
    for call in (recorder.start, recorder.pause, recorder.unpause, recorder.soft_reboot, recorder.reset):  # fmt: skip
        call(ns, "vm")
    recorder.stop(ns, "vm", 10)
    recorder.add_volume(ns, "vm", {"name": "v"})
    recorder.remove_volume(ns, "vm", "v")
    methods = {n for n in vars(HttpVirtApi) if not n.startswith("_") and n != "console_log"}
    assert len(recorder.paths) == len(methods), "a new virt-api call: add it here and to the manifest"  # fmt: skip
    for path in recorder.paths:
        resource, sub = path.split("/")
        review = kube.client.create(REVIEWS, {
            "spec": {"user": applied.account, "groups": list(GROUPS),
                     "resourceAttributes": {"group": "subresources.kubevirt.io", "resource": resource,
                                            "subresource": sub, "verb": "update", "namespace": ns}},
        })  # fmt: skip
        assert review["status"]["allowed"], (
            f"the manifest does not allow {path}: {review['status']}"
        )
    called = {Access("subresources.kubevirt.io", path, "update") for path in recorder.paths}
    assert {r for r in manifest_rules() if r.group == "subresources.kubevirt.io"} == called
