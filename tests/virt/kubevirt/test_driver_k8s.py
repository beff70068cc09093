"""KubevirtDriver against a real kube-apiserver (+ the test-side KubeVirt simulator).

Checks the Kubernetes objects each operation leaves behind and the power states it reports,
and that watches resume after a disconnect and relist after 410 Gone. Skips locally when the
server is not answering, fails under CI (see kube_env).
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import replace

import pytest

from openkeel.domain.states import PowerState
from openkeel.virt import errors
from openkeel.virt.kubevirt import client as k
from openkeel.virt.kubevirt import export
from openkeel.virt.kubevirt.driver import KubevirtDriver
from openkeel.virt.kubevirt.manifests import disks, naming
from openkeel.virt.kubevirt.nodes import availability_zones, parse_quantity
from openkeel.virt.kubevirt.watch import Watcher
from openkeel.virt.model import (
    FlavorSpec,
    ImageSpec,
    InstanceRef,
    InstanceSpec,
    LifecycleEvent,
    LifecycleTransition,
    MigrationRef,
    NetworkInterface,
    RebootType,
    SnapshotTarget,
)
from tests.virt.kubevirt import kube_env, sim_export
from tests.virt.kubevirt.kube_env import KubeSession

T = LifecycleTransition
SMALL = FlavorSpec("1", "m1.small", vcpus=1, memory_mb=512, root_gb=1)
LARGE = FlavorSpec("2", "m1.large", vcpus=2, memory_mb=1024, root_gb=2)
IMAGE = ImageSpec("155d900f-4e14-4e4c-a73d-069cbf4541e6", disk_format="qcow2")
PORT = NetworkInterface("p-1", "n-1", "fa:16:3e:00:00:01", ("10.0.0.3",))


def make_spec(flavor: FlavorSpec = SMALL) -> InstanceSpec:
    server_id = str(uuid.uuid4())
    ref = InstanceRef(server_id, f"instance-{server_id[:8]}", "project-1")
    return InstanceSpec(ref, "vm1", "user-1", flavor, IMAGE, network=(PORT,), user_data="aGk=")


def vm_of(driver: KubevirtDriver, spec: InstanceSpec) -> k.JsonObj:
    return driver.client.get(k.VMS, naming.vm_name(spec.uuid), driver._ns(spec.ref))


def vmi_of(driver: KubevirtDriver, spec: InstanceSpec) -> k.JsonObj | None:
    return driver.client.get_or_none(k.VMIS, naming.vm_name(spec.uuid), driver._ns(spec.ref))


def test_spawn_creates_namespace_secret_vm_and_running_vmi(
    kube: KubeSession, driver: KubevirtDriver
) -> None:
    spec = make_spec()
    driver.spawn(spec)
    ns = driver._ns(spec.ref)
    assert ns == f"{kube.prefix}project-1"
    assert kube.client.get(k.NAMESPACES, ns)["metadata"]["labels"] == {
        naming.LABEL_MANAGED_BY: naming.MANAGED_BY
    }
    vm = vm_of(driver, spec)
    assert vm["spec"]["runStrategy"] == "Manual"
    assert vm["metadata"]["labels"]["nova.openstack.org/node"] == driver.node
    template = vm["spec"]["template"]["spec"]
    assert template["domain"]["firmware"]["uuid"] == spec.uuid
    assert template["nodeSelector"] == {k.HOSTNAME_LABEL: driver.node}
    secrets = kube.client.items(k.SECRETS, ns, naming.server_selector(spec.uuid))
    assert [s["metadata"]["name"] for s in secrets] == [naming.user_data_secret_name(spec.uuid)]
    vmi = vmi_of(driver, spec)
    assert vmi is not None and vmi["status"]["phase"] == "Running"
    assert vmi["status"]["nodeName"] == driver.node
    assert vm_of(driver, spec)["status"]["printableStatus"] in ("Running", "Starting")
    assert ("start", naming.vm_name(spec.uuid)) in kube.virt_api.calls
    assert driver.get_info(spec.ref).state == PowerState.RUNNING


def test_stop_start_reboot_pause_states(kube: KubeSession, driver: KubevirtDriver) -> None:
    spec = make_spec()
    driver.spawn(spec)
    first_uid = vmi_of(driver, spec)["metadata"]["uid"]  # type: ignore[index]
    driver.reboot(spec.ref, RebootType.SOFT)
    driver.reboot(spec.ref, RebootType.HARD)
    assert vmi_of(driver, spec)["metadata"]["uid"] == first_uid  # type: ignore[index]
    driver.pause(spec.ref)
    assert driver.get_info(spec.ref).state == PowerState.PAUSED
    driver.suspend(spec.ref)
    assert driver.get_info(spec.ref).state == PowerState.SUSPENDED
    driver.resume(spec)
    driver.power_off(spec.ref)
    assert vmi_of(driver, spec) is None
    assert driver.get_info(spec.ref).state == PowerState.SHUTDOWN
    assert vm_of(driver, spec)["status"].get("stateChangeRequests") is None
    driver.power_on(spec)
    assert vmi_of(driver, spec)["metadata"]["uid"] != first_uid  # type: ignore[index]
    name = naming.vm_name(spec.uuid)
    mine = [c for c in kube.virt_api.calls if c[1] == name]
    assert mine == [("start", name), ("softreboot", name), ("reset", name), ("pause", name),
                    ("unpause", name), ("stop", name), ("start", name)]  # fmt: skip


def test_resize_rewrites_the_vm_spec_and_revert_restores_it(driver: KubevirtDriver) -> None:
    spec = make_spec()
    driver.spawn(spec)
    migration = MigrationRef(1, "host-a", "host-a", "n", "n")
    driver.migrate_disk_and_power_off(spec, "host-a", LARGE)
    driver.finish_migration(migration, replace(spec, flavor=LARGE), driver_disks(spec), resize_instance=True)  # fmt: skip
    domain = vm_of(driver, spec)["spec"]["template"]["spec"]["domain"]
    assert (domain["cpu"]["sockets"], domain["memory"]["guest"]) == (2, "1024Mi")
    assert vm_of(driver, spec)["metadata"]["labels"][naming.LABEL_FLAVOR_ID] == "2"
    driver.finish_revert_migration(migration, spec)
    domain = vm_of(driver, spec)["spec"]["template"]["spec"]["domain"]
    assert (domain["cpu"]["sockets"], domain["memory"]["guest"]) == (1, "512Mi")
    assert "nova.openstack.org/resize-source" not in vm_of(driver, spec)["metadata"]["annotations"]
    assert driver.get_info(spec.ref).state == PowerState.RUNNING


def driver_disks(spec: InstanceSpec) -> object:
    from openkeel.virt.model import DiskTransfer

    return DiskTransfer(spec.uuid)


def test_live_migration_creates_vmim_and_moves_the_vmi(kube: KubeSession) -> None:
    prefix = kube.node_prefix()
    source, dest = kube.driver("host-a", prefix), kube.driver("host-b", prefix)
    spec = make_spec()
    source.spawn(spec)
    source.live_migration(spec.ref, "host-b", lambda _p: None)
    (vmim,) = kube.client.items(k.MIGRATIONS, source._ns(spec.ref), naming.server_selector(spec.uuid))  # fmt: skip
    assert vmim["spec"] == {"vmiName": naming.vm_name(spec.uuid), "addedNodeSelector": {k.HOSTNAME_LABEL: f"{prefix}host-b"}}  # fmt: skip
    assert vmim["status"]["phase"] == "Succeeded"
    vmi = vmi_of(source, spec)
    assert vmi is not None and vmi["status"]["nodeName"] == f"{prefix}host-b"
    # the pin moved with the guest: template and VMI select the destination
    assert vmi["spec"]["nodeSelector"] == {k.HOSTNAME_LABEL: f"{prefix}host-b"}
    assert vm_of(source, spec)["spec"]["template"]["spec"]["nodeSelector"] == {k.HOSTNAME_LABEL: f"{prefix}host-b"}  # fmt: skip
    assert dest.list_instance_uuids() == [spec.uuid] and source.list_instance_uuids() == []
    assert dest.get_available_resource(dest.node).vcpus_used == 1
    assert source.get_available_resource(source.node).vcpus_used == 0


def _migration_phases(kube: KubeSession, drv: KubevirtDriver, spec: InstanceSpec) -> list[str]:
    found = kube.client.items(k.MIGRATIONS, drv._ns(spec.ref), naming.server_selector(spec.uuid))
    return [m.get("status", {}).get("phase", "") for m in found]


def _wait_vmi_selector(drv: KubevirtDriver, spec: InstanceSpec, node: str) -> None:
    deadline = time.monotonic() + 30
    while (vmi_of(drv, spec) or {}).get("spec", {}).get("nodeSelector") != {k.HOSTNAME_LABEL: node}:  # fmt: skip
        assert time.monotonic() < deadline, vmi_of(drv, spec)
        time.sleep(0.02)


def test_simulator_keeps_the_vmi_selector_over_the_added_one(kube: KubeSession) -> None:
    """KubeVirt's rule, which the old driver ignored: a migration of a VMI pinned to its node
    by nodeSelector cannot leave that node, whatever addedNodeSelector says."""
    prefix = kube.node_prefix()
    source, _dest = kube.driver("host-a", prefix), kube.driver("host-b", prefix)
    spec = make_spec()
    source.spawn(spec)
    kube.client.create(k.MIGRATIONS, {
        "metadata": {"generateName": "by-hand-", "namespace": source._ns(spec.ref),
                     "labels": {naming.LABEL_SERVER_ID: spec.uuid}},
        "spec": {"vmiName": naming.vm_name(spec.uuid), "addedNodeSelector": {k.HOSTNAME_LABEL: f"{prefix}host-b"}},
    })  # fmt: skip
    deadline = time.monotonic() + 30
    while _migration_phases(kube, source, spec) != ["Failed"]:
        assert time.monotonic() < deadline, _migration_phases(kube, source, spec)
        time.sleep(0.02)
    assert vmi_of(source, spec)["status"]["nodeName"] == f"{prefix}host-a"  # type: ignore[index]


def test_live_migration_needs_the_live_update_rollout(kube: KubeSession) -> None:
    """Under vmRolloutStrategy Stage the VMI keeps its pin (the VM says RestartRequired):
    the driver fails the migration with the reason and points the template back."""
    prefix = kube.node_prefix()
    source, _dest = kube.driver("host-a", prefix), kube.driver("host-b", prefix)
    spec = make_spec()
    source.spawn(spec)
    kube.simulator.rollout_strategy = "Stage"
    try:
        with pytest.raises(errors.PermanentDriverError, match="vmRolloutStrategy must be LiveUpdate"):  # fmt: skip
            source.live_migration(spec.ref, "host-b", lambda _p: None)
    finally:
        kube.simulator.rollout_strategy = "LiveUpdate"
    assert vm_of(source, spec)["spec"]["template"]["spec"]["nodeSelector"] == {k.HOSTNAME_LABEL: f"{prefix}host-a"}  # fmt: skip
    assert _migration_phases(kube, source, spec) == []
    assert vmi_of(source, spec)["status"]["nodeName"] == f"{prefix}host-a"  # type: ignore[index]
    assert source.list_instance_uuids() == [spec.uuid]


def test_live_migration_to_a_node_not_ready_fails_and_stays(kube: KubeSession) -> None:
    prefix = kube.node_prefix()
    source, dest = kube.driver("host-a", prefix), kube.driver("host-b", prefix)
    spec = make_spec()
    source.spawn(spec)
    not_ready = {"conditions": [{"type": "Ready", "status": "False", "reason": "KubeletNotReady"}]}  # fmt: skip
    kube.client.patch(k.NODES, dest.node, {"status": not_ready}, sub="status")
    with pytest.raises(errors.PermanentDriverError, match="failed"):
        source.live_migration(spec.ref, "host-b", lambda _p: None)
    assert _migration_phases(kube, source, spec) == ["Failed"]
    # the pin is back on the source, in the template and (rolled out) in the VMI
    assert vm_of(source, spec)["spec"]["template"]["spec"]["nodeSelector"] == {k.HOSTNAME_LABEL: source.node}  # fmt: skip
    _wait_vmi_selector(source, spec, source.node)
    assert vmi_of(source, spec)["status"]["nodeName"] == source.node  # type: ignore[index]
    assert source.get_info(spec.ref).state == PowerState.RUNNING


def test_rescue_boots_the_rescue_disk_first_and_keeps_the_root_disk(
    driver: KubevirtDriver,
) -> None:
    spec = make_spec()
    driver.spawn(spec)
    before = vm_of(driver, spec)["spec"]["template"]
    driver.rescue(spec, IMAGE, "pw")
    template = vm_of(driver, spec)["spec"]["template"]["spec"]
    disks = template["domain"]["devices"]["disks"]
    assert (disks[0]["name"], disks[0]["bootOrder"]) == ("rescue", 1)
    assert [d["name"] for d in disks[1:]] == [d["name"] for d in before["spec"]["domain"]["devices"]["disks"]]  # fmt: skip
    assert all("bootOrder" not in d for d in disks[1:])
    assert template["volumes"][0]["name"] == "rescue"
    assert driver.get_info(spec.ref).state == PowerState.RUNNING
    driver.unrescue(spec.ref)
    assert vm_of(driver, spec)["spec"]["template"] == before
    assert driver.get_info(spec.ref).state == PowerState.RUNNING


def test_admin_password_goes_to_the_guest_agent_secret(
    kube: KubeSession, driver: KubevirtDriver
) -> None:
    plain = make_spec()
    driver.spawn(plain)
    with pytest.raises(errors.GuestAgentNotEnabled):
        driver.set_admin_password(plain.ref, "pw")
    spec = replace(make_spec(), image=replace(IMAGE, properties={"hw_qemu_guest_agent": "yes"}))
    driver.spawn(spec)
    name = naming.password_secret_name(spec.uuid)
    credentials = vm_of(driver, spec)["spec"]["template"]["spec"]["accessCredentials"]
    assert {"userPassword": {"source": {"secret": {"secretName": name}},
                             "propagationMethod": {"qemuGuestAgent": {}}}} in credentials  # fmt: skip
    driver.set_admin_password(spec.ref, "n3w-pw")
    secret = kube.client.get(k.SECRETS, name, driver._ns(spec.ref))
    assert secret["data"] == {"root": "bjN3LXB3"}  # base64 of n3w-pw
    assert driver.get_info(spec.ref).state == PowerState.RUNNING
    with pytest.raises(errors.NotSupported):
        driver.trigger_crash_dump(spec.ref)  # KubeVirt has no NMI


def test_snapshot_creates_vm_snapshot_and_image_data_volume(
    kube: KubeSession, driver: KubevirtDriver
) -> None:
    spec = make_spec()
    driver.spawn(spec)
    image_id = str(uuid.uuid4())
    result = driver.snapshot(spec.ref, SnapshotTarget(image_id, "snap"), lambda *_a: None)
    assert (result.image_id, result.size_bytes) == (image_id, 2**30)
    snap = kube.client.get(k.VM_SNAPSHOTS, f"snapshot-{image_id}", driver._ns(spec.ref))
    assert snap["spec"]["source"] == {"apiGroup": "kubevirt.io", "kind": "VirtualMachine", "name": naming.vm_name(spec.uuid)}  # fmt: skip
    assert snap["status"]["readyToUse"] is True
    images_ns = driver.settings.images_namespace
    dv = kube.client.get(k.DATA_VOLUMES, f"image-{image_id}", images_ns)
    assert dv["spec"]["source"]["pvc"]["name"] == naming.root_data_volume_name(spec.uuid)
    assert dv["status"]["phase"] == "Succeeded"  # the snapshot returned after the clone
    # the image's DataSource on the clone: what a server booted from the image clones
    source = kube.client.get(k.DATA_SOURCES, f"image-{image_id}", images_ns)
    assert source["spec"]["source"]["pvc"] == {"name": f"image-{image_id}", "namespace": images_ns}
    assert disks.image_source_ref(image_id, driver.settings) == {
        "kind": "DataSource", "name": f"image-{image_id}", "namespace": images_ns,
    }  # fmt: skip
    assert result.properties == {"openkeel_kubevirt_data_source": f"{images_ns}/image-{image_id}"}
    # the bytes: a VirtualMachineExport of the VM snapshot, Ready before snapshot() returned
    ns = driver._ns(spec.ref)
    vmexport = kube.client.get(k.VM_EXPORTS, f"export-{image_id}", ns)
    assert vmexport["spec"]["source"] == {"apiGroup": "snapshot.kubevirt.io", "kind": "VirtualMachineSnapshot", "name": f"snapshot-{image_id}"}  # fmt: skip
    assert vmexport["spec"]["ttlDuration"] == "1h"
    assert vmexport["status"]["phase"] == "Ready"
    secret = kube.client.get(k.SECRETS, vmexport["spec"]["tokenSecretRef"], ns)
    assert set(secret["data"]) == {"token"}
    assert result.chunks is not None
    data = b"".join(result.chunks)  # streamed over HTTPS with the token, gzip decompressed
    assert data == sim_export.disk_bytes(ns, naming.root_data_volume_name(spec.uuid))
    path, status, _size = kube.simulator.exports.downloads[-1]
    assert path.endswith(f"/virtualmachineexports/export-{image_id}/volumes/snapshot-{image_id}-root/disk.img.gz")  # fmt: skip
    assert status == "200"
    # the export and its token are deleted once the stream ends
    assert kube.client.get_or_none(k.VM_EXPORTS, f"export-{image_id}", ns) is None
    assert kube.client.get_or_none(k.SECRETS, f"export-token-{image_id}", ns) is None


def test_snapshot_without_export_keeps_the_data_in_the_cluster(kube: KubeSession) -> None:
    """[kubevirt] snapshot_export = false: no export, the data only in the DataSource."""
    settings = replace(kube.settings, snapshot_export=False)
    drv = kube.driver("host-a", kube.node_prefix())
    drv.settings = settings
    try:
        spec = make_spec()
        drv.spawn(spec)
        image_id = str(uuid.uuid4())
        result = drv.snapshot(spec.ref, SnapshotTarget(image_id, "snap"), lambda *_a: None)
        assert result.chunks is None
        assert (
            kube.client.get_or_none(k.VM_EXPORTS, f"export-{image_id}", drv._ns(spec.ref)) is None
        )
    finally:
        drv.cleanup_host("host-a")


def test_snapshot_export_never_ready_fails_and_leaves_no_export(kube: KubeSession) -> None:
    """An export server that never comes up: the wait times out, the export and its token
    Secret are deleted, the error names the export."""
    drv = kube.driver("host-a", kube.node_prefix())
    drv.settings = replace(drv.settings, export_ready_timeout=2)
    kube.simulator.exports.ready = False
    try:
        spec = make_spec()
        drv.spawn(spec)
        image_id = str(uuid.uuid4())
        with pytest.raises(errors.TransientDriverError, match=f"after 2 s .*export-{image_id}"):
            drv.snapshot(spec.ref, SnapshotTarget(image_id, "snap"), lambda *_a: None)
        ns = drv._ns(spec.ref)
        assert kube.client.get_or_none(k.VM_EXPORTS, f"export-{image_id}", ns) is None
        assert kube.client.get_or_none(k.SECRETS, f"export-token-{image_id}", ns) is None
    finally:
        kube.simulator.exports.ready = True
        drv.cleanup_host("host-a")


def test_export_server_refuses_a_wrong_token(kube: KubeSession, driver: KubevirtDriver) -> None:
    """The export server checks x-kubevirt-export-token (401), as KubeVirt's does."""
    spec = make_spec()
    driver.spawn(spec)
    image_id = str(uuid.uuid4())
    result = driver.snapshot(spec.ref, SnapshotTarget(image_id, "snap"), lambda *_a: None)
    ns = driver._ns(spec.ref)
    link = export.pick_link(
        kube.client.get(k.VM_EXPORTS, f"export-{image_id}", ns)["status"], "external", ("root",), "wrong"
    )  # fmt: skip
    assert link is not None and link.format == "gzip"
    with pytest.raises(errors.PermanentDriverError, match="answered 401"):
        b"".join(export.download(link, 10.0, lambda: None))
    assert result.chunks is not None
    close = getattr(result.chunks, "close", None)
    assert close is not None
    close()  # never started: the export stays until its TTL (KubeVirt deletes it then)
    assert kube.client.get(k.VM_EXPORTS, f"export-{image_id}", ns)


def test_a_snapshot_image_boots(kube: KubeSession, driver: KubevirtDriver) -> None:
    """A server booted from the snapshot's image clones the image's DataSource and runs."""
    spec = make_spec()
    driver.spawn(spec)
    image_id = str(uuid.uuid4())
    result = driver.snapshot(spec.ref, SnapshotTarget(image_id, "snap"), lambda *_a: None)
    assert result.chunks is not None
    b"".join(result.chunks)
    booted = replace(make_spec(), image=ImageSpec(image_id, disk_format="raw"))
    driver.spawn(booted)
    root = kube.client.get(k.DATA_VOLUMES, naming.root_data_volume_name(booted.uuid), driver._ns(booted.ref))  # fmt: skip
    assert root["spec"]["sourceRef"]["name"] == f"image-{image_id}"
    assert root["status"]["phase"] == "Succeeded"
    assert driver.get_info(booted.ref).state == PowerState.RUNNING


def test_image_cache_pass_removes_what_deleted_images_kept(
    kube: KubeSession, driver: KubevirtDriver
) -> None:
    """manage_image_cache: the DataVolume, DataSource and VM snapshot of an image the image
    service deleted go; those of an image that still exists stay; a second pass finds nothing."""
    spec = make_spec()
    driver.spawn(spec)
    kept, deleted = str(uuid.uuid4()), str(uuid.uuid4())
    for image_id in (kept, deleted):
        driver.snapshot(spec.ref, SnapshotTarget(image_id, "snap"), lambda *_a: None)
    ns, images_ns = driver._ns(spec.ref), driver.settings.images_namespace
    asked: list[str] = []

    def gone(image_id: str) -> bool:
        asked.append(image_id)
        return image_id == deleted

    assert driver.manage_image_cache(gone) == [deleted]
    assert {kept, deleted} <= set(asked)  # (other tests keep images in the namespace too)
    for res in (k.DATA_VOLUMES, k.DATA_SOURCES):
        assert kube.client.get_or_none(res, f"image-{deleted}", images_ns) is None
        assert kube.client.get(res, f"image-{kept}", images_ns)
    assert kube.client.get_or_none(k.VM_SNAPSHOTS, f"snapshot-{deleted}", ns) is None
    assert kube.client.get(k.VM_SNAPSHOTS, f"snapshot-{kept}", ns)
    assert driver.manage_image_cache(lambda image_id: image_id == deleted) == []


def test_destroy_cascades_and_is_idempotent(kube: KubeSession, driver: KubevirtDriver) -> None:
    spec = make_spec()
    driver.spawn(spec)
    ns = driver._ns(spec.ref)
    root = naming.root_data_volume_name(spec.uuid)
    assert kube.client.get(k.DATA_VOLUMES, root, ns)["status"]["phase"] == "Succeeded"
    driver.destroy(spec.ref)
    driver.destroy(spec.ref)
    assert kube.client.get_or_none(k.VMS, naming.vm_name(spec.uuid), ns) is None
    assert vmi_of(driver, spec) is None
    assert kube.client.get_or_none(k.DATA_VOLUMES, root, ns) is None
    assert kube.client.items(k.SECRETS, ns, naming.server_selector(spec.uuid)) == []


def test_hotplug_edits_the_vm_template(driver: KubevirtDriver) -> None:
    """NIC hot-plug; volumes: test_volumes_k8s.py."""
    spec = make_spec()
    driver.spawn(spec)
    driver.attach_interface(spec.ref, replace(PORT, port_id="p-2", mac_address="fa:16:3e:00:00:02"))  # fmt: skip
    template = vm_of(driver, spec)["spec"]["template"]["spec"]
    assert [i["name"] for i in template["domain"]["devices"]["interfaces"]] == ["port-p-1", "port-p-2"]  # fmt: skip
    driver.detach_interface(spec.ref, "p-2")
    template = vm_of(driver, spec)["spec"]["template"]["spec"]
    assert template["domain"]["devices"]["interfaces"][1]["state"] == "absent"


def test_nodes_are_hypervisors_with_zones(kube: KubeSession) -> None:
    prefix = kube.node_prefix()
    kube_env.ensure_node(kube.client, f"{prefix}z", cpu="7500m", memory="8Gi", zone="az-1")
    drv = kube.driver("z", prefix)
    res = drv.get_available_resource(f"{prefix}z")
    assert (res.vcpus, res.memory_mb, res.local_gb, res.hypervisor_version) == (7, 8192, 500, 6001000)  # fmt: skip
    assert drv.availability_zone(f"{prefix}z") == "az-1"
    assert availability_zones(kube.client)[f"{prefix}z"] == "az-1"
    assert parse_quantity("1500m") == parse_quantity("1.5")


def test_watch_feeds_events_for_out_of_band_power_changes(kube: KubeSession) -> None:
    prefix = kube.node_prefix()
    drv = kube.driver("host-a", prefix, watch_events=True)
    spec = make_spec()
    drv.spawn(spec)
    got = threading.Event()
    seen: list[LifecycleEvent] = []

    def on_event(event: LifecycleEvent) -> None:
        seen.append(event)
        got.set()

    drv.register_event_listener(on_event)
    # the guest powers itself off: KubeVirt deletes the VMI, nobody asked the driver
    kube.client.delete(k.VMIS, naming.vm_name(spec.uuid), drv._ns(spec.ref))
    assert got.wait(10)
    assert [(e.instance_uuid, e.transition) for e in seen] == [(spec.uuid, T.STOPPED)]
    drv.cleanup_host("host-a")


def _collect(kube: KubeSession, **kw: object) -> tuple[Watcher, list[tuple[str, str]], threading.Condition]:  # fmt: skip
    seen: list[tuple[str, str]] = []
    cond = threading.Condition()

    def handler(kind: str, obj: k.JsonObj) -> None:
        with cond:
            seen.append((kind, obj["metadata"]["name"]))
            cond.notify_all()

    ns = f"{kube.prefix}watch"
    kube.client.ensure_namespace(ns)
    watcher = Watcher(kube.client, k.SECRETS, handler, namespace=ns, **kw)  # type: ignore[arg-type]
    return watcher, seen, cond


def until(cond: threading.Condition, predicate: Callable[[], bool], timeout: float = 10) -> bool:
    """Wait for ``predicate``, re-checked on every handler call and at least every 50 ms."""
    deadline = time.monotonic() + timeout
    with cond:
        while not predicate():
            if time.monotonic() > deadline:
                return False
            cond.wait(0.05)
    return True


def _secret(kube: KubeSession, name: str) -> None:
    kube.client.create(k.SECRETS, {"metadata": {"name": name, "namespace": f"{kube.prefix}watch"}})


class GoneOnce:
    """Delegates to the real client; the next watch after ``gone = True`` answers 410."""

    def __init__(self, client: k.KubeClient) -> None:
        self.client, self.gone, self.lists = client, False, 0

    def list(self, *args: object) -> k.JsonObj:
        self.lists += 1
        return self.client.list(*args)  # type: ignore[arg-type]

    def watch(self, *args: object) -> object:
        if self.gone:
            self.gone = False
            raise k.GoneError(410, "Expired", "too old resource version")
        return self.client.watch(*args)  # type: ignore[arg-type]


def test_watch_relists_after_410_gone(kube: KubeSession) -> None:
    watcher, seen, cond = _collect(kube, timeout_seconds=1)
    proxy = GoneOnce(kube.client)
    watcher.client = proxy  # type: ignore[assignment]
    watcher.start()
    first = f"a-{uuid.uuid4().hex[:8]}"
    _secret(kube, first)
    assert until(cond, lambda: ("ADDED", first) in seen)
    proxy.gone = True  # the next reconnect (stream ends after 1 s) gets 410 Gone
    kube.client.delete(k.SECRETS, first, f"{kube.prefix}watch")
    assert until(cond, lambda: watcher.relists == 2)
    second = f"b-{uuid.uuid4().hex[:8]}"
    _secret(kube, second)
    assert until(cond, lambda: ("ADDED", second) in seen)
    assert watcher.stop()
    assert seen.count(("DELETED", first)) == 1 and proxy.lists == 2


def test_watch_resumes_from_last_resource_version_after_disconnect(kube: KubeSession) -> None:
    watcher, seen, cond = _collect(kube, timeout_seconds=1)
    watcher.start()
    assert watcher.synced.wait(10)
    first = f"a-{uuid.uuid4().hex[:8]}"
    _secret(kube, first)
    assert until(cond, lambda: ("ADDED", first) in seen)
    resumes = watcher.resumes
    assert until(cond, lambda: watcher.resumes > resumes)
    second = f"b-{uuid.uuid4().hex[:8]}"
    _secret(kube, second)
    assert until(cond, lambda: ("ADDED", second) in seen)
    assert watcher.stop()
    assert watcher.relists == 1 and seen.count(("ADDED", first)) == 1
