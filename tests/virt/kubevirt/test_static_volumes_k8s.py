"""A real Cinder's volumes on a real kube-apiserver: static PVs bound to the volume's claim.

The driver makes the PersistentVolume of each attachment (the API server validates its
iscsi/fc/csi source), the PVC ``volume-<id>`` pre-bound to it, binds them through the
simulator's PV controller (sim_binding), hot-plugs the claim and deletes claim and PV at
detach and with the server (decision 0080). The last test asks the real Cinder of
scripts/start-cinder.sh for the connection info of a KubeVirt host's connector. Skips
locally when a server is not answering, fails under CI (kube_env, cinder_required).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from openkeel.virt import errors
from openkeel.virt.kubevirt import client as k
from openkeel.virt.kubevirt.driver import KubevirtDriver
from openkeel.virt.kubevirt.manifests import naming
from openkeel.virt.kubevirt.manifests.static_volumes import ANNOTATION_PERSISTENT_VOLUME
from openkeel.virt.kubevirt.manifests.static_volumes import pv_name as static_pv_name
from openkeel.virt.kubevirt.volumes import volume_status
from openkeel.virt.model import VolumeAttachment
from tests.virt.kubevirt.kube_env import KubeSession
from tests.virt.kubevirt.test_driver_k8s import make_spec, vm_of, vmi_of
from tests.virt.kubevirt.test_static_volumes import FC, ISCSI
from tests.virt.kubevirt.test_static_volumes import cinder as cinder_info
from tests.volume.test_cinder_adapter import Cinder, cinder, users  # noqa: F401


def eventually(check: Callable[[], bool], what: str, timeout: float = 30) -> None:
    """Poll a condition the simulator's watches reach asynchronously (bounded)."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: not reached in {timeout} s")
        time.sleep(0.02)


def info_for(volume_id: str, kind: str, data: dict[str, Any], **beside: Any) -> dict[str, Any]:
    made = cinder_info(kind, {**data, "volume_id": volume_id}, **beside)
    made["volume_id"] = volume_id
    made["attachment_id"] = str(uuid.uuid4())
    return made


def gone(kube: KubeSession, res: k.Resource, name: str, ns: str | None = None) -> Callable[[], bool]:  # fmt: skip
    return lambda: kube.client.get_or_none(res, name, ns) is None


def test_an_iscsi_volume_is_a_static_pv_bound_hot_plugged_and_released(
    kube: KubeSession, driver: KubevirtDriver
) -> None:
    spec = make_spec()
    driver.spawn(spec)
    ns, volume_id = driver._ns(spec.ref), str(uuid.uuid4())
    claim = naming.volume_claim_name(volume_id)
    info = info_for(volume_id, "iscsi", ISCSI)
    driver.attach_volume(spec.ref, VolumeAttachment(volume_id, "/dev/sdb", info))
    pv_name = static_pv_name(volume_id, info["attachment_id"], ns)
    pvc = kube.client.get(k.PVCS, claim, ns)
    assert pvc["status"]["phase"] == "Bound" and pvc["spec"]["volumeName"] == pv_name
    assert pvc["metadata"]["annotations"][ANNOTATION_PERSISTENT_VOLUME] == pv_name
    pv = kube.client.get(k.PVS, pv_name)
    assert pv["status"]["phase"] == "Bound"
    assert pv["spec"]["claimRef"]["uid"] == pvc["metadata"]["uid"]
    assert pv["spec"]["persistentVolumeReclaimPolicy"] == "Retain"
    assert pv["spec"]["iscsi"]["initiatorName"] == driver._initiator()
    assert pv["spec"]["iscsi"]["secretRef"] == {"name": pv_name, "namespace": ns}
    secret = kube.client.get(k.SECRETS, pv_name, ns)
    assert secret["type"] == "kubernetes.io/iscsi-chap"
    volume = next(v for v in vm_of(driver, spec)["spec"]["template"]["spec"]["volumes"] if v["name"] == claim)  # fmt: skip
    assert volume == {"name": claim, "persistentVolumeClaim": {"claimName": claim, "hotpluggable": True}}  # fmt: skip
    status = volume_status(vmi_of(driver, spec), claim)
    assert status is not None and status["phase"] == "Ready"
    driver.detach_volume(spec.ref, volume_id)
    eventually(gone(kube, k.PVCS, claim, ns), "the claim deleted")
    eventually(gone(kube, k.PVS, pv_name), "the PV deleted")
    assert kube.client.get_or_none(k.SECRETS, pv_name, ns) is None


def test_a_stopped_guest_gets_the_claim_and_delete_releases_it(
    kube: KubeSession, driver: KubevirtDriver
) -> None:
    spec = make_spec()
    driver.spawn(spec)
    driver.power_off(spec.ref)
    ns, volume_id = driver._ns(spec.ref), str(uuid.uuid4())
    info = info_for(volume_id, "fibre_channel", FC)
    driver.attach_volume(spec.ref, VolumeAttachment(volume_id, "/dev/sdb", info))
    pv_name = static_pv_name(volume_id, info["attachment_id"], ns)
    assert kube.client.get(k.PVS, pv_name)["spec"]["fc"]["lun"] == 2
    eventually(lambda: kube.client.get(k.PVCS, naming.volume_claim_name(volume_id), ns)["status"]["phase"] == "Bound", "bound")  # fmt: skip
    driver.destroy(spec.ref)
    eventually(gone(kube, k.PVCS, naming.volume_claim_name(volume_id), ns), "the claim deleted")
    eventually(gone(kube, k.PVS, pv_name), "the PV deleted")


def test_a_multiattach_volume_keeps_one_claim_until_its_last_detach(
    kube: KubeSession, driver: KubevirtDriver
) -> None:
    first, second = make_spec(), make_spec()
    driver.spawn(first), driver.spawn(second)
    ns, volume_id = driver._ns(first.ref), str(uuid.uuid4())
    claim = naming.volume_claim_name(volume_id)
    one = info_for(volume_id, "fibre_channel", FC, multiattach=True)
    two = info_for(volume_id, "fibre_channel", FC, multiattach=True)
    driver.attach_volume(first.ref, VolumeAttachment(volume_id, "/dev/sdb", one))
    driver.attach_volume(second.ref, VolumeAttachment(volume_id, "/dev/sdb", two))
    pv_name = static_pv_name(volume_id, one["attachment_id"], ns)
    assert kube.client.get(k.PVCS, claim, ns)["spec"]["accessModes"] == ["ReadWriteMany"]
    # the namespace's claim is the volume's: the second attachment makes no second PV
    assert (
        kube.client.get_or_none(k.PVS, static_pv_name(volume_id, two["attachment_id"], ns)) is None
    )
    driver.detach_volume(first.ref, volume_id)
    assert kube.client.get(k.PVCS, claim, ns)["metadata"].get("deletionTimestamp") is None
    assert kube.client.get_or_none(k.PVS, pv_name) is not None
    driver.detach_volume(second.ref, volume_id)
    eventually(gone(kube, k.PVCS, claim, ns), "the claim deleted")
    eventually(gone(kube, k.PVS, pv_name), "the PV deleted")


def test_nfs_and_incomplete_connection_info_make_nothing(
    kube: KubeSession, driver: KubevirtDriver
) -> None:
    spec = make_spec()
    driver.spawn(spec)
    ns, volume_id = driver._ns(spec.ref), str(uuid.uuid4())
    nfs = info_for(volume_id, "nfs", {"export": "192.168.122.5:/srv/cinder", "name": f"volume-{volume_id}"})  # fmt: skip
    with pytest.raises(errors.NotSupported, match="'nfs' volume"):
        driver.attach_volume(spec.ref, VolumeAttachment(volume_id, "/dev/sdb", nfs))
    with pytest.raises(errors.NotSupported, match="no 'target_portal'"):
        bare = info_for(volume_id, "iscsi", {"target_iqn": "iqn.x", "target_lun": 0})
        driver.attach_volume(spec.ref, VolumeAttachment(volume_id, "/dev/sdb", bare))
    assert kube.client.get_or_none(k.PVCS, naming.volume_claim_name(volume_id), ns) is None


def _pv(name: str, claim_ns: str, claim: str, **spec: Any) -> k.JsonObj:
    body = {"capacity": {"storage": "2Gi"}, "accessModes": ["ReadWriteOnce"], "volumeMode": "Block",
            "persistentVolumeReclaimPolicy": "Retain", "storageClassName": "",
            "claimRef": {"namespace": claim_ns, "name": claim},
            "fc": {"targetWWNs": ["500a098280feeba5"], "lun": 0}, **spec}  # fmt: skip
    return {"metadata": {"name": name}, "spec": body}


def _pvc(ns: str, name: str, **spec: Any) -> k.JsonObj:
    body = {"accessModes": ["ReadWriteOnce"], "volumeMode": "Block", "storageClassName": "",
            "resources": {"requests": {"storage": "2Gi"}}, **spec}  # fmt: skip
    return {"metadata": {"name": name, "namespace": ns}, "spec": body}


@pytest.fixture
def binding_ns(kube: KubeSession) -> Iterator[str]:
    ns = f"{kube.prefix}binding-{uuid.uuid4().hex[:6]}"
    kube.client.ensure_namespace(ns)
    made: list[str] = []
    yield ns
    for pvc in kube.client.items(k.PVCS, ns):
        kube.client.delete(k.PVCS, pvc["metadata"]["name"], ns)
    for pv in kube.client.items(k.PVS):
        if (pv["spec"].get("claimRef") or {}).get("namespace") == ns:
            made.append(pv["metadata"]["name"])
            kube.client.delete(k.PVS, pv["metadata"]["name"])
    for name in made:
        eventually(gone(kube, k.PVS, name), f"PV {name} deleted")
    kube.client.delete(k.NAMESPACES, ns)


@pytest.mark.parametrize(
    "mismatch",
    [
        {"capacity": {"storage": "1Gi"}},
        {"accessModes": ["ReadOnlyMany"]},
        {"volumeMode": "Filesystem"},
        {"storageClassName": "fast"},
    ],
)
def test_the_stand_in_binds_only_a_pv_that_satisfies_the_claim(
    kube: KubeSession, binding_ns: str, mismatch: dict[str, Any]
) -> None:
    """Kubernetes' PV controller: a pre-bound PV that does not satisfy the claim (size, access
    modes, volumeMode, class) leaves it Pending; the matching pair made after it binds (and,
    the watch delivering in order, says the first pair was seen)."""
    ns, tag = binding_ns, uuid.uuid4().hex[:6]
    kube.client.create(k.PVS, _pv(f"{kube.prefix}bad-{tag}", ns, "bad", **mismatch))
    kube.client.create(k.PVCS, _pvc(ns, "bad"), ns)
    kube.client.create(k.PVS, _pv(f"{kube.prefix}good-{tag}", ns, "good"))
    kube.client.create(k.PVCS, _pvc(ns, "good"), ns)
    eventually(lambda: kube.client.get(k.PVCS, "good", ns).get("status", {}).get("phase") == "Bound", "good bound")  # fmt: skip
    eventually(lambda: (ns, "bad") not in kube.simulator.binder.bound and kube.client.get(k.PVS, f"{kube.prefix}bad-{tag}").get("status", {}).get("phase") != "Bound", "bad left alone", 1)  # fmt: skip
    assert kube.client.get(k.PVCS, "bad", ns)["status"]["phase"] == "Pending"
    assert "volumeName" not in kube.client.get(k.PVCS, "bad", ns)["spec"]
    # the claim deleted: its Retain PV is Released, not deleted
    kube.client.delete(k.PVCS, "good", ns)
    eventually(lambda: kube.client.get(k.PVS, f"{kube.prefix}good-{tag}")["status"]["phase"] == "Released", "released")  # fmt: skip


def test_real_cinders_connection_info_for_a_kubevirt_host(
    kube: KubeSession,
    driver: KubevirtDriver,
    cinder: Cinder,  # noqa: F811
) -> None:
    """The running Cinder (FakeLoggingVolumeDriver) answers the KubeVirt host's connector with
    ``iscsi`` and only ``access_mode`` in ``data``: the adapter adds the attachment id and the
    size; the driver reads it as a static iSCSI volume, finds no target and says so, making
    nothing. What it proves: the connector, Cinder's answer and the refusal fit end to end;
    not: a real target (the fake driver exports none)."""
    spec = make_spec()
    driver.spawn(spec)
    made = cinder.volume(size=2)
    attachment = cinder.adapter.attachment_create(cinder.demo, made.id, spec.uuid)
    connector = {"host": "compute-1", "ip": "127.0.0.1", "multipath": False,
                 "platform": "x86_64", "os_type": "linux", **driver.volume_connector()}  # fmt: skip
    info = cinder.adapter.attachment_update(cinder.demo, attachment, connector)
    assert info["driver_volume_type"] == "iscsi" and info["attachment_id"] == attachment
    assert info["size_gb"] == 2 and "target_iqn" not in info["data"]
    with pytest.raises(errors.NotSupported, match=r"'iscsi' volume .*no 'target_iqn'"):
        driver.attach_volume(spec.ref, VolumeAttachment(made.id, "/dev/sdb", info))
    ns = driver._ns(spec.ref)
    assert kube.client.get_or_none(k.PVCS, naming.volume_claim_name(made.id), ns) is None
