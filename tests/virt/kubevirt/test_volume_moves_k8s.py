"""A volume-backed KubeVirt server (root and data volume are Cinder's DataVolumes) cold
migrated to another host on a real kube-apiserver: the VM the destination rewrites keeps both
claims (the compute host gives finish_migration and finish_revert_migration the server's
block devices with the destination's connection info), runs on the destination's node, and a
revert puts it back with the same claims. Skips locally when the server is not answering,
fails under CI (see kube_env)."""

from __future__ import annotations

import uuid
from dataclasses import replace

from openkeel.domain.states import PowerState
from openkeel.virt.kubevirt import client as k
from openkeel.virt.kubevirt.manifests import naming
from openkeel.virt.model import BlockDevice, DiskTransfer, InstanceSpec, MigrationRef
from tests.virt.kubevirt.kube_env import KubeSession
from tests.virt.kubevirt.test_driver_k8s import LARGE, make_spec, vm_of, vmi_of
from tests.virt.kubevirt.test_volumes_k8s import kubevirt_info


def _volume_backed() -> tuple[InstanceSpec, str, str]:
    root_id, data_id = str(uuid.uuid4()), str(uuid.uuid4())
    image = {"image_id": "155d900f-4e14-4e4c-a73d-069cbf4541e6"}
    root = BlockDevice("image", "volume", 0, size_gb=1, volume_id=root_id, device_name="/dev/vda",
                       connection_info=kubevirt_info(root_id, image))  # fmt: skip
    data = BlockDevice("volume", "volume", None, volume_id=data_id, device_name="/dev/vdb",
                       connection_info=kubevirt_info(data_id))  # fmt: skip
    base = make_spec()
    spec = InstanceSpec(base.ref, base.hostname, base.user_id, base.flavor, None,
                        block_devices=(root, data), network=base.network)  # fmt: skip
    return spec, root_id, data_id


def _claims(vm: k.JsonObj) -> set[str]:
    volumes = vm["spec"]["template"]["spec"]["volumes"]
    return {v["dataVolume"]["name"] for v in volumes if "dataVolume" in v}


def test_cold_migration_of_a_volume_backed_server_keeps_its_claims(kube: KubeSession) -> None:
    prefix = kube.node_prefix()
    source, dest = kube.driver("host-a", prefix), kube.driver("host-b", prefix)
    spec, root_id, data_id = _volume_backed()
    claims = {naming.volume_claim_name(root_id), naming.volume_claim_name(data_id)}
    source.spawn(spec)
    assert _claims(vm_of(source, spec)) == claims
    migration = MigrationRef(1, "host-a", "host-b", source.node, dest.node)
    disks = source.migrate_disk_and_power_off(spec, "host-b", LARGE)
    resized = replace(spec, flavor=LARGE)
    dest.finish_migration(migration, resized, disks, resize_instance=True)
    vm = vm_of(dest, resized)
    assert _claims(vm) == claims
    assert not vm["spec"].get("dataVolumeTemplates")  # still no image disk of its own
    node = vm["spec"]["template"]["spec"]["nodeSelector"][k.HOSTNAME_LABEL]
    assert node == f"{prefix}host-b"
    assert dest.get_info(resized.ref).state == PowerState.RUNNING
    vmi = vmi_of(dest, resized)
    assert vmi is not None and _claims({"spec": {"template": vmi}}) == claims
    # revert: the source's VM again, same claims, on the source's node
    source.finish_revert_migration(migration, spec)
    vm = vm_of(source, spec)
    assert _claims(vm) == claims
    assert vm["spec"]["template"]["spec"]["nodeSelector"][k.HOSTNAME_LABEL] == f"{prefix}host-a"
    # and again, confirmed: the volumes' DataVolumes outlive the server's VM
    disks = source.migrate_disk_and_power_off(spec, "host-b", LARGE)
    dest.finish_migration(migration, resized, disks, resize_instance=True)
    source.confirm_migration(migration, spec.ref)
    assert _claims(vm_of(dest, resized)) == claims
    dest.destroy(resized.ref)
    ns = dest._ns(spec.ref)
    assert all(kube.client.get_or_none(k.DATA_VOLUMES, c, ns) is not None for c in claims)
    assert isinstance(disks, DiskTransfer)
