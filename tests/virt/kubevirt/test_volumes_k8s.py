"""Cinder volumes of KubeVirt guests on a real kube-apiserver (+ the simulator's hot-plug).

Attach/detach through the addvolume/removevolume subresources on a running VM (waiting for the
VMI's volumeStatus), the template on a stopped one, the clear NotSupported without the
HotplugVolumes feature gate, boot from volume (the root disk is the volume's claim), and the
connection info that names a claim (decision 0067). Skips locally when the server is not
answering, fails under CI (see kube_env).
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from openkeel.cmd.volume import volume_service
from openkeel.domain.states import PowerState
from openkeel.virt import errors
from openkeel.virt.kubevirt import client as k
from openkeel.virt.kubevirt.driver import KubevirtDriver
from openkeel.virt.kubevirt.manifests import claims, naming
from openkeel.virt.kubevirt.volume_backing import ClusterVolumes
from openkeel.virt.kubevirt.volumes import volume_status
from openkeel.virt.model import BlockDevice, InstanceSpec, JsonValue, VolumeAttachment
from openkeel.volume.embedded.service import Caller, VolumeService
from tests.virt.kubevirt import sim_volumes
from tests.virt.kubevirt.kube_env import KubeSession
from tests.virt.kubevirt.test_driver_k8s import make_spec, vm_of, vmi_of


@pytest.fixture
def no_hotplug(kube: KubeSession) -> Iterator[None]:
    """The cluster's KubeVirt without the HotplugVolumes feature gate."""
    kube.virt_api.hotplug.enabled = False
    try:
        yield
    finally:
        kube.virt_api.hotplug.enabled = True


def kubevirt_info(volume_id: str, populate: dict[str, JsonValue] | None = None) -> dict[str, JsonValue]:  # fmt: skip
    """What the embedded volume service answers a KubeVirt host (a blank DataVolume)."""
    return {"driver_volume_type": "kubevirt",
            "data": {"volume_id": volume_id, "claim_name": naming.volume_claim_name(volume_id),
                     "claim_kind": "dataVolume", "namespace": None, "size_gb": 1,
                     "populate": populate or {"blank": {}}}}  # fmt: skip


def attachment(volume_id: str) -> VolumeAttachment:
    return VolumeAttachment(volume_id, "/dev/sdb", kubevirt_info(volume_id))


def template(driver: KubevirtDriver, spec: InstanceSpec) -> k.JsonObj:
    found: k.JsonObj = vm_of(driver, spec)["spec"]["template"]["spec"]
    return found


def volume_names(spec: k.JsonObj) -> list[str]:
    return [v["name"] for v in spec.get("volumes", [])]


def hotplug_pods(kube: KubeSession, ns: str) -> list[k.JsonObj]:
    return kube.client.items(k.PODS, ns, f"{sim_volumes.POD_LABEL}={sim_volumes.POD_VALUE}")


def test_attach_to_a_running_guest_hot_plugs_and_waits_for_ready(
    kube: KubeSession, driver: KubevirtDriver
) -> None:
    spec = make_spec()
    driver.spawn(spec)
    ns, volume_id = driver._ns(spec.ref), str(uuid.uuid4())
    name = naming.volume_claim_name(volume_id)
    driver.attach_volume(spec.ref, attachment(volume_id))
    # The volume's own DataVolume (no owner, no server label: it outlives the server).
    dv = kube.client.get(k.DATA_VOLUMES, name, ns)
    assert dv["metadata"]["annotations"][naming.ANNOTATION_VOLUME_ID] == volume_id
    assert "ownerReferences" not in dv["metadata"]
    assert naming.LABEL_SERVER_ID not in dv["metadata"]["labels"]
    # Through virt-api (the request is queued on the VM, virt-controller edits the template)
    assert ("addvolume", naming.vm_name(spec.uuid)) in kube.virt_api.calls
    tmpl = template(driver, spec)
    assert {"name": name, "dataVolume": {"name": name, "hotpluggable": True}} in tmpl["volumes"]
    disk = next(d for d in tmpl["domain"]["devices"]["disks"] if d["name"] == name)
    assert disk == {"name": name, "disk": {"bus": "scsi"}, "serial": volume_id[:20]}
    assert not vm_of(driver, spec).get("status", {}).get("volumeRequests")
    # ...and returns once the VMI says Ready, with its attachment pod.
    vmi = vmi_of(driver, spec)
    assert vmi is not None
    status = next(s for s in vmi["status"]["volumeStatus"] if s["name"] == name)
    assert status["phase"] == "Ready" and status["target"].startswith("sd")
    pods = hotplug_pods(kube, ns)
    assert [p["metadata"]["name"] for p in pods] == [status["hotplugVolume"]["attachPodName"]]
    driver.attach_volume(spec.ref, attachment(volume_id))  # again: nothing more
    assert kube.virt_api.calls.count(("addvolume", naming.vm_name(spec.uuid))) == 1

    driver.detach_volume(spec.ref, volume_id)
    vmi = vmi_of(driver, spec)
    assert vmi is not None
    assert all(s["name"] != name for s in vmi["status"].get("volumeStatus", []))
    assert name not in volume_names(vmi["spec"]) and name not in volume_names(template(driver, spec))  # fmt: skip
    assert hotplug_pods(kube, ns) == []
    driver.detach_volume(spec.ref, volume_id)  # again: nothing to do
    assert kube.virt_api.calls.count(("removevolume", naming.vm_name(spec.uuid))) == 1
    assert kube.client.get_or_none(k.DATA_VOLUMES, name, ns) is not None  # the volume stays
    assert driver.get_info(spec.ref).state == PowerState.RUNNING


def test_attach_to_a_stopped_guest_edits_the_template_and_plugs_at_start(
    kube: KubeSession, driver: KubevirtDriver
) -> None:
    spec = make_spec()
    driver.spawn(spec, power_on=False)
    volume_id = str(uuid.uuid4())
    name = naming.volume_claim_name(volume_id)
    driver.attach_volume(spec.ref, attachment(volume_id))
    assert ("addvolume", naming.vm_name(spec.uuid)) not in kube.virt_api.calls
    assert name in volume_names(template(driver, spec))
    driver.power_on(spec)
    # A hotpluggable volume of the template is plugged after the VMI starts; attaching again
    # waits for it to be Ready.
    driver.attach_volume(spec.ref, attachment(volume_id))
    vmi = vmi_of(driver, spec)
    assert vmi is not None
    assert next(s for s in vmi["status"]["volumeStatus"] if s["name"] == name)["phase"] == "Ready"
    driver.power_off(spec.ref)
    driver.detach_volume(spec.ref, volume_id)
    assert name not in volume_names(template(driver, spec))
    assert ("removevolume", naming.vm_name(spec.uuid)) not in kube.virt_api.calls


@pytest.mark.usefixtures("no_hotplug")
def test_without_the_feature_gate_hot_plug_is_not_supported(
    kube: KubeSession, driver: KubevirtDriver
) -> None:
    spec = make_spec()
    driver.spawn(spec)
    volume_id = str(uuid.uuid4())
    with pytest.raises(errors.NotSupported, match="HotplugVolumes feature gate"):
        driver.attach_volume(spec.ref, attachment(volume_id))
    assert naming.volume_claim_name(volume_id) not in volume_names(template(driver, spec))
    assert driver.get_info(spec.ref).state == PowerState.RUNNING


def test_a_claim_that_never_binds_times_out_clearly(kube: KubeSession) -> None:
    drv = kube.driver("host-a", kube.node_prefix())
    try:
        spec = make_spec()
        drv.spawn(spec)
        drv.wait_timeout = 0.5  # the claim below never appears: no wait would end otherwise
        missing = VolumeAttachment("vol-missing", "/dev/sdb")  # a PVC named volume-vol-missing
        # The first wait may end before virt-controller has written the volume's status
        # ("no volumeStatus entry"); once it has, the time-out says where the hot-plug stopped.
        with pytest.raises(errors.TransientDriverError, match="VMI volumeStatus: "):
            drv.attach_volume(spec.ref, missing)
        name = naming.volume_claim_name("vol-missing")
        deadline = time.monotonic() + 30
        while volume_status(vmi_of(drv, spec), name) is None and time.monotonic() < deadline:
            time.sleep(0.05)
        with pytest.raises(errors.TransientDriverError, match="volumeStatus: Pending"):
            drv.attach_volume(spec.ref, missing)
        # A PVC that appears later is plugged: attaching again completes.
        ns = drv._ns(spec.ref)
        pvc = {"metadata": {"name": "volume-vol-missing", "namespace": ns},
               "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}  # fmt: skip
        kube.client.create(k.PVCS, pvc)
        drv.wait_timeout = 60.0
        vmi = vmi_of(drv, spec)
        assert vmi is not None
        kube.simulator.on_vmi("MODIFIED", vmi)  # virt-controller notices the new claim
        drv.attach_volume(spec.ref, missing)
        drv.detach_volume(spec.ref, "vol-missing")
    finally:
        drv.cleanup_host("host-a")


def test_the_stand_in_keeps_kubevirts_hot_plug_rules(
    kube: KubeSession, driver: KubevirtDriver
) -> None:
    spec = make_spec()
    driver.spawn(spec)
    ns, vm = driver._ns(spec.ref), naming.vm_name(spec.uuid)
    source = {"persistentVolumeClaim": {"claimName": "c"}}
    virtio = {"name": "v", "disk": {"name": "v", "disk": {"bus": "virtio"}}, "volumeSource": source}
    with pytest.raises(k.KubeError, match="does not use a scsi bus") as refused:
        kube.virt_api.add_volume(ns, vm, virtio)
    assert refused.value.status == 400
    with pytest.raises(k.KubeError, match="cannot have type cdrom"):
        kube.virt_api.add_volume(ns, vm, {**virtio, "disk": {"cdrom": {"bus": "scsi"}}})
    # A volume of the VM's definition is not hot-unpluggable.
    with pytest.raises(k.KubeError, match="not hotpluggable"):
        kube.virt_api.remove_volume(ns, vm, "root")
    kube.virt_api.hotplug.enabled = False
    try:
        with pytest.raises(k.KubeError, match="feature gate not enabled"):
            kube.virt_api.remove_volume(ns, vm, "root")
    finally:
        kube.virt_api.hotplug.enabled = True


def test_local_and_foreign_connections_are_not_supported(driver: KubevirtDriver) -> None:
    spec = make_spec()
    driver.spawn(spec)
    for kind in ("local", "iscsi"):
        info: dict[str, JsonValue] = {"driver_volume_type": kind, "data": {}}
        with pytest.raises(errors.NotSupported, match=f"'{kind}' volume"):
            driver.attach_volume(spec.ref, VolumeAttachment("vol-2", "/dev/sdc", info))
    other_ns = kubevirt_info("vol-3")
    assert isinstance(other_ns["data"], dict)
    other_ns["data"]["namespace"] = "elsewhere"
    with pytest.raises(errors.PermanentDriverError, match="outside the namespace"):
        driver.attach_volume(spec.ref, VolumeAttachment("vol-3", "/dev/sdc", other_ns))


def test_boot_from_volume_uses_the_volumes_claim_as_root_disk(
    kube: KubeSession, driver: KubevirtDriver
) -> None:
    root_id, data_id = str(uuid.uuid4()), str(uuid.uuid4())
    image = {"image_id": "155d900f-4e14-4e4c-a73d-069cbf4541e6"}
    root = BlockDevice("image", "volume", 0, size_gb=1, volume_id=root_id,
                       connection_info=kubevirt_info(root_id, image))  # fmt: skip
    data = BlockDevice("volume", "volume", None, volume_id=data_id,
                       connection_info=kubevirt_info(data_id))  # fmt: skip
    base = make_spec()
    spec = InstanceSpec(base.ref, base.hostname, base.user_id, base.flavor, None,
                        block_devices=(root, data), network=base.network)  # fmt: skip
    driver.spawn(spec)
    ns = driver._ns(spec.ref)
    tmpl = template(driver, spec)
    vm = vm_of(driver, spec)
    assert not vm["spec"].get("dataVolumeTemplates")  # no image root disk of the server's own
    root_name, data_name = naming.volume_claim_name(root_id), naming.volume_claim_name(data_id)
    assert {"name": "root", "dataVolume": {"name": root_name}} in tmpl["volumes"]
    assert {"name": data_name, "dataVolume": {"name": data_name, "hotpluggable": True}} in tmpl["volumes"]  # fmt: skip
    root_dv = kube.client.get(k.DATA_VOLUMES, root_name, ns)
    assert root_dv["spec"]["sourceRef"]["name"] == naming.image_data_source_name(image["image_id"])
    # The data volume was defined hotpluggable: it is unplugged while the guest runs.
    driver.detach_volume(spec.ref, data_id)
    assert data_name not in volume_names(template(driver, spec))
    driver.destroy(spec.ref)
    # The volumes are Cinder's: the server's delete leaves them.
    assert kube.client.get_or_none(k.DATA_VOLUMES, root_name, ns) is not None
    assert kube.client.get_or_none(k.DATA_VOLUMES, data_name, ns) is not None


def test_a_reimaged_root_volume_is_imported_again_at_the_rebuild(
    kube: KubeSession, driver: KubevirtDriver
) -> None:
    """A volume-backed rebuild at 2.93 (decision 0069): the guest destroyed, the volume service
    reimaged the volume (its connection info names the new image), the guest defined again on
    a DataVolume imported from the new image under the same claim name."""
    root_id = str(uuid.uuid4())
    first, second = str(uuid.uuid4()), str(uuid.uuid4())
    base = make_spec()

    def spec_on(image_id: str) -> InstanceSpec:
        root = BlockDevice("image", "volume", 0, size_gb=1, volume_id=root_id,
                           connection_info=kubevirt_info(root_id, {"image_id": image_id}))  # fmt: skip
        return InstanceSpec(base.ref, base.hostname, base.user_id, base.flavor, None,
                            block_devices=(root,), network=base.network)  # fmt: skip

    driver.spawn(spec_on(first))
    ns, name = driver._ns(base.ref), naming.volume_claim_name(root_id)
    dv = kube.client.get(k.DATA_VOLUMES, name, ns)
    assert dv["metadata"]["annotations"][naming.ANNOTATION_IMAGE_ID] == first
    old_uid = dv["metadata"]["uid"]
    driver.destroy(base.ref)
    driver.spawn(spec_on(second))  # what compute's rebuild does after the reimage
    dv = kube.client.get(k.DATA_VOLUMES, name, ns)
    assert dv["metadata"]["uid"] != old_uid
    assert dv["metadata"]["annotations"][naming.ANNOTATION_IMAGE_ID] == second
    assert dv["spec"]["sourceRef"]["name"] == naming.image_data_source_name(second)
    assert {"name": "root", "dataVolume": {"name": name}} in template(driver, spec_on(second))["volumes"]  # fmt: skip
    assert driver.get_info(base.ref, use_cache=False).state == PowerState.RUNNING
    # the same image again (a rebuild before 2.93): the DataVolume stays
    driver.destroy(base.ref)
    driver.spawn(spec_on(second))
    assert kube.client.get(k.DATA_VOLUMES, name, ns)["metadata"]["uid"] == dv["metadata"]["uid"]
    driver.destroy(base.ref)


def test_a_data_volume_that_records_no_image_is_kept(
    kube: KubeSession, driver: KubevirtDriver
) -> None:
    """DataVolumes made before decision 0069 record no image: never replaced."""
    root_id = str(uuid.uuid4())
    base = make_spec()
    ns, name = driver._ns(base.ref), naming.volume_claim_name(root_id)
    kube.client.ensure_namespace(ns, {naming.LABEL_MANAGED_BY: naming.MANAGED_BY})
    made = kube.client.create(k.DATA_VOLUMES, {
        "apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataVolume",
        "metadata": {"name": name, "namespace": ns,
                     "annotations": {naming.ANNOTATION_VOLUME_ID: root_id}},
        "spec": {"source": {"blank": {}}, "storage": {"resources": {"requests": {"storage": "1Gi"}}}},
    }, ns)  # fmt: skip
    root = BlockDevice("image", "volume", 0, size_gb=1, volume_id=root_id,
                       connection_info=kubevirt_info(root_id, {"image_id": str(uuid.uuid4())}))  # fmt: skip
    spec = InstanceSpec(base.ref, base.hostname, base.user_id, base.flavor, None,
                        block_devices=(root,), network=base.network)  # fmt: skip
    driver.spawn(spec)
    assert kube.client.get(k.DATA_VOLUMES, name, ns)["metadata"]["uid"] == made["metadata"]["uid"]
    driver.destroy(base.ref)


def test_a_volume_the_vm_was_defined_with_unplugs_only_when_stopped(
    driver: KubevirtDriver,
) -> None:
    base = make_spec()
    legacy = BlockDevice("volume", "volume", None, volume_id="vol-old")  # no connection type
    spec = InstanceSpec(base.ref, base.hostname, base.user_id, base.flavor, base.image,
                        block_devices=(legacy,), network=base.network)  # fmt: skip
    driver.spawn(spec)
    with pytest.raises(errors.NotSupported, match="stop the server first"):
        driver.detach_volume(spec.ref, "vol-old")
    driver.power_off(spec.ref)
    driver.detach_volume(spec.ref, "vol-old")
    tmpl = template(driver, spec)
    assert all(d.get("serial") != "vol-old" for d in tmpl["domain"]["devices"]["disks"])


def test_a_multiattach_volume_is_one_shareable_claim_in_two_guests(
    kube: KubeSession, driver: KubevirtDriver
) -> None:
    """Decision 0075: the same DataVolume hot-plugged into two running VMs, the disk
    ``shareable`` in both, the DataVolume asking ReadWriteMany; unplugging it from one VM
    leaves it in the other."""
    first, second = make_spec(), make_spec()
    driver.spawn(first), driver.spawn(second)
    volume_id = str(uuid.uuid4())
    name = naming.volume_claim_name(volume_id)
    shared = VolumeAttachment(volume_id, "/dev/sdb", {**kubevirt_info(volume_id), "multiattach": True})  # fmt: skip
    driver.attach_volume(first.ref, shared)
    driver.attach_volume(second.ref, shared)
    ns = driver._ns(first.ref)
    assert driver._ns(second.ref) == ns  # one project: one namespace, one claim
    dv = kube.client.get(k.DATA_VOLUMES, name, ns)
    assert dv["spec"]["storage"]["accessModes"] == ["ReadWriteMany"]
    for spec in (first, second):
        disk = next(d for d in template(driver, spec)["domain"]["devices"]["disks"] if d["name"] == name)  # fmt: skip
        assert disk == {"name": name, "disk": {"bus": "scsi"}, "serial": volume_id[:20], "shareable": True}  # fmt: skip
        vmi = vmi_of(driver, spec)
        assert vmi is not None
        status = next(s for s in vmi["status"]["volumeStatus"] if s["name"] == name)
        assert status["phase"] == "Ready"
    driver.detach_volume(first.ref, volume_id)
    assert name not in volume_names(template(driver, first))
    assert name in volume_names(template(driver, second))
    assert kube.client.get_or_none(k.DATA_VOLUMES, name, ns) is not None


def test_claim_of_connection_info() -> None:
    assert claims.claim_of("v1", {}) == claims.Claim("v1", "volume-v1")
    found = claims.claim_of("v1", kubevirt_info("v1"))
    assert (found.name, found.kind, found.size_gb, found.populate) == ("volume-v1", "dataVolume", 1, {"blank": {}})  # fmt: skip
    assert claims.volume_source(found, hotpluggable=True) == {"dataVolume": {"name": "volume-v1", "hotpluggable": True}}  # fmt: skip
    pvc = claims.claim_of("v2", {"driver_volume_type": "kubevirt", "data": {"claim_name": "csi-7"}})
    assert claims.volume_source(pvc, hotpluggable=False) == {"persistentVolumeClaim": {"claimName": "csi-7"}}  # fmt: skip
    assert not pvc.shared and claims.claim_of("v3", {"multiattach": True}).shared


def _embedded(kube: KubeSession, tmp_path: Path) -> VolumeService:
    """The embedded volume service with its KubeVirt backing (as the all-in-one builds it)."""
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'api.db'}")
    backing = ClusterVolumes(lambda: k.KubeClient(kube.client.config), kube.settings.namespace_scheme)  # fmt: skip
    return volume_service(engine, str(tmp_path), backing=backing)


def _attach_detach(service: VolumeService, driver: KubevirtDriver, spec: InstanceSpec, volume_id: str) -> None:  # fmt: skip
    """Attach through the volume service's connection info (the DataVolume is made), detach."""
    row = service.create_attachment(CALLER, volume_id, spec.uuid, {"kubevirt": True, "host": "h"})
    info = service.connection_info(row)
    assert info is not None
    driver.attach_volume(spec.ref, VolumeAttachment(volume_id, "/dev/sdb", info))
    driver.detach_volume(spec.ref, volume_id)
    service.delete_attachment(CALLER, row["id"])


CALLER = Caller("project-1", "user-1")


def _source_in_cluster(kube: KubeSession, driver: KubevirtDriver, tmp_path: Path) -> tuple[VolumeService, InstanceSpec, str, str]:  # fmt: skip
    """The embedded volume service, a running server, its namespace and a 1 GiB volume whose
    DataVolume the server's first attach made."""
    service = _embedded(kube, tmp_path)
    source = service.create_volume(CALLER, {"size": 1})["id"]
    spec = make_spec()
    driver.spawn(spec)
    _attach_detach(service, driver, spec, source)
    return service, spec, driver._ns(spec.ref), source


def test_deleting_a_volume_deletes_its_data_volume(
    kube: KubeSession, driver: KubevirtDriver, tmp_path: Path
) -> None:
    """The embedded volume service on a KubeVirt cloud (decision 0071): the DataVolume the host
    made at the first attach goes with the volume; a volume never attached (no DataVolume) and
    the other volume's DataVolume are left alone."""
    service = _embedded(kube, tmp_path)
    gone, kept = (service.create_volume(CALLER, {"size": 1})["id"] for _ in range(2))
    spec = make_spec()
    driver.spawn(spec)
    for volume_id in (gone, kept):  # the first attach makes the DataVolume (decision 0067)
        _attach_detach(service, driver, spec, volume_id)
    ns = driver._ns(spec.ref)
    assert kube.client.get(k.DATA_VOLUMES, naming.volume_claim_name(gone), ns)
    service.delete_volume(CALLER, gone)
    assert kube.client.get_or_none(k.DATA_VOLUMES, naming.volume_claim_name(gone), ns) is None
    assert kube.client.get(k.DATA_VOLUMES, naming.volume_claim_name(kept), ns)
    never = service.create_volume(CALLER, {"size": 1})["id"]
    service.delete_volume(CALLER, never)  # nothing in the cluster: nothing to do
    service.delete_volume(CALLER, kept)
    assert kube.client.get_or_none(k.DATA_VOLUMES, naming.volume_claim_name(kept), ns) is None


def test_a_volume_from_a_snapshot_clones_the_snapshots_copy(
    kube: KubeSession, driver: KubevirtDriver, tmp_path: Path
) -> None:
    """A snapshot of a volume that is in the cluster is a CDI clone of its DataVolume; a volume
    made from the snapshot clones that copy (not blank); one from a snapshot of a volume never
    in the cluster is made as that volume was (here: blank). Deleting the snapshot deletes its
    copy."""
    service, spec, ns, source = _source_in_cluster(kube, driver, tmp_path)
    snap = service.create_snapshot(CALLER, {"volume_id": source})["id"]
    copy = kube.client.get(k.DATA_VOLUMES, f"volume-snapshot-{snap}", ns)
    assert copy["spec"]["source"] == {"pvc": {"namespace": ns, "name": naming.volume_claim_name(source)}}  # fmt: skip
    restored = service.create_volume(CALLER, {"snapshot_id": snap})["id"]
    _attach_detach(service, driver, spec, restored)
    made = kube.client.get(k.DATA_VOLUMES, naming.volume_claim_name(restored), ns)
    assert made["spec"]["source"] == {"pvc": {"namespace": ns, "name": f"volume-snapshot-{snap}"}}
    assert made["status"]["phase"] == "Succeeded"
    # a snapshot of a volume that never reached the cluster: no copy; its volumes as the source
    unplugged = service.create_volume(CALLER, {"size": 1})["id"]
    bare = service.create_snapshot(CALLER, {"volume_id": unplugged})["id"]
    assert kube.client.get_or_none(k.DATA_VOLUMES, f"volume-snapshot-{bare}", ns) is None
    from_bare = service.create_volume(CALLER, {"snapshot_id": bare})["id"]
    _attach_detach(service, driver, spec, from_bare)
    assert kube.client.get(k.DATA_VOLUMES, naming.volume_claim_name(from_bare), ns)["spec"]["source"] == {"blank": {}}  # fmt: skip
    service.delete_snapshot(CALLER, snap)
    assert kube.client.get_or_none(k.DATA_VOLUMES, f"volume-snapshot-{snap}", ns) is None
    for volume_id in (restored, from_bare, source):
        service.delete_volume(CALLER, volume_id, cascade=True)
    service.delete_volume(CALLER, unplugged, cascade=True)


def test_a_volume_from_another_volume_is_a_cdi_clone_made_at_creation(
    kube: KubeSession, driver: KubevirtDriver, tmp_path: Path
) -> None:
    """Cinder's ``source_volid`` on KubeVirt (issue 13): the new volume's DataVolume is made
    when the volume is created, a CDI clone (``spec.source.pvc`` {namespace, name}) of the
    source's with the new volume's size; the volume is ``creating`` until CDI says the clone
    Succeeded, then ``available``, and the first attach keeps that DataVolume. It stays when
    the source is deleted (a clone, not a reference). A volume cloned from one that never
    reached the cluster is made as the source was (here: blank)."""
    service, spec, ns, source = _source_in_cluster(kube, driver, tmp_path)
    with held_clones(kube):
        clone = service.create_volume(CALLER, {"source_volid": source, "size": 2})
        made = kube.client.get(k.DATA_VOLUMES, naming.volume_claim_name(clone["id"]), ns)
        assert service.volume(CALLER, clone["id"])["status"] == "creating"
        _cdi_phase(kube, made, "Succeeded")
        assert service.volume(CALLER, clone["id"])["status"] == "available"
    assert made["spec"]["source"] == {"pvc": {"namespace": ns, "name": naming.volume_claim_name(source)}}  # fmt: skip
    assert made["spec"]["storage"]["resources"] == {"requests": {"storage": "2Gi"}}
    assert made["metadata"]["annotations"][naming.ANNOTATION_VOLUME_ID] == clone["id"]
    service.delete_volume(CALLER, source)
    assert kube.client.get_or_none(k.DATA_VOLUMES, naming.volume_claim_name(source), ns) is None
    _attach_detach(service, driver, spec, clone["id"])
    kept = kube.client.get(k.DATA_VOLUMES, naming.volume_claim_name(clone["id"]), ns)
    assert kept["metadata"]["uid"] == made["metadata"]["uid"]
    assert kept["spec"]["source"] == made["spec"]["source"]
    # a source that never reached the cluster: nothing made now, the attach makes it as the source
    unplugged = service.create_volume(CALLER, {"size": 1})["id"]
    from_unplugged = service.create_volume(CALLER, {"source_volid": unplugged})["id"]
    assert service.volume(CALLER, from_unplugged)["status"] == "available"
    assert kube.client.get_or_none(k.DATA_VOLUMES, naming.volume_claim_name(from_unplugged), ns) is None  # fmt: skip
    _attach_detach(service, driver, spec, from_unplugged)
    assert kube.client.get(k.DATA_VOLUMES, naming.volume_claim_name(from_unplugged), ns)["spec"]["source"] == {"blank": {}}  # fmt: skip
    for volume_id in (clone["id"], from_unplugged, unplugged):
        service.delete_volume(CALLER, volume_id)


@contextlib.contextmanager
def held_clones(kube: KubeSession) -> Iterator[None]:
    """CDI's stand-in leaves PVC clones pending (as while a guest holds the source)."""
    kube.simulator.clones_proceed = False
    try:
        yield
    finally:
        kube.simulator.clones_proceed = True


def _cdi_phase(kube: KubeSession, dv: k.JsonObj, phase: str) -> None:
    meta = dv["metadata"]
    kube.client.patch(k.DATA_VOLUMES, meta["name"], {"status": {"phase": phase}}, meta["namespace"], sub="status")  # fmt: skip


def test_a_failed_clone_is_a_volume_in_error(
    kube: KubeSession, driver: KubevirtDriver, tmp_path: Path
) -> None:
    """CDI reports the clone Failed: the volume, listed or shown, is in error."""
    service, _spec, ns, source = _source_in_cluster(kube, driver, tmp_path)
    with held_clones(kube):
        clone = service.create_volume(CALLER, {"source_volid": source})["id"]
        assert [v["status"] for v in service.visible(CALLER, "volumes") if v["id"] == clone] == ["creating"]  # fmt: skip
        _cdi_phase(kube, kube.client.get(k.DATA_VOLUMES, naming.volume_claim_name(clone), ns), "Failed")  # fmt: skip
        assert [v["status"] for v in service.visible(CALLER, "volumes") if v["id"] == clone] == ["error"]  # fmt: skip
    for volume_id in (clone, source):
        service.delete_volume(CALLER, volume_id)


def test_a_clone_the_cluster_refuses_leaves_the_volume_in_error(
    kube: KubeSession, driver: KubevirtDriver, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A clone the API server refuses (here a 403 on the create) puts the new volume in error,
    as a failed Cinder clone, and makes no DataVolume; the source is untouched."""
    service, _spec, ns, source = _source_in_cluster(kube, driver, tmp_path)

    def refuse(self: k.KubeClient, res: k.Resource, obj: k.JsonObj, namespace: str | None = None) -> k.JsonObj:  # fmt: skip
        raise k.KubeError(403, "Forbidden", "datavolumes is forbidden")

    monkeypatch.setattr(k.KubeClient, "ensure", refuse)
    clone = service.create_volume(CALLER, {"source_volid": source})["id"]
    monkeypatch.undo()
    assert service.volume(CALLER, clone)["status"] == "error"
    assert kube.client.get_or_none(k.DATA_VOLUMES, naming.volume_claim_name(clone), ns) is None
    assert service.volume(CALLER, source)["status"] == "available"
    for volume_id in (clone, source):
        service.delete_volume(CALLER, volume_id)
