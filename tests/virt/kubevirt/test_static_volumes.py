"""A real Cinder's connection info as a static PersistentVolume (decision 0080). Pure.

The connection info is shaped as Cinder's target/volume drivers answer a connector (iSCSI
targets' ``_get_iscsi_properties``, the FC drivers', the RBD driver's, the NFS driver's), with
what OpenKeel's Cinder adapter puts beside ``data`` (attachment id, size, multiattach).
"""

from __future__ import annotations

from typing import Any

import pytest

from openkeel.virt import errors
from openkeel.virt.kubevirt.manifests import claims, static_volumes
from openkeel.virt.kubevirt.manifests.settings import KubevirtSettings
from openkeel.virt.kubevirt.manifests.static_volumes import static_volume

VOLUME = "6a4e1b8c-2f0a-4f57-9a55-3c2a8d6b7e01"
ATTACHMENT = "9b0c7d1e-8f0a-4f57-9a55-3c2a8d6b7e02"
NS = "openkeel-demo"
INITIATOR = "iqn.2010-10.org.openkeel:node-1"
CEPH = KubevirtSettings(ceph_csi_cluster_id="b9127830-b0cc-4e34-aa47-9d1a2e9949a8",
                        ceph_csi_node_stage_secret="ceph-csi/csi-rbd-secret")  # fmt: skip


def cinder(kind: str, data: dict[str, Any], **beside: Any) -> dict[str, Any]:
    """Cinder's answer as the adapter hands it to a host (openkeel.volume.cinder)."""
    return {"driver_volume_type": kind, "data": {"volume_id": VOLUME, "access_mode": "rw",
            "discard": False, "qos_specs": None, "encrypted": False, **data},
            "attachment_id": ATTACHMENT, "status": "attaching", "volume_id": VOLUME,
            "size_gb": 3, **beside}  # fmt: skip


ISCSI = {"target_discovered": False, "target_portal": "192.168.122.10:3260",
         "target_iqn": f"iqn.2010-10.org.openstack:volume-{VOLUME}", "target_lun": 1,
         "auth_method": "CHAP", "auth_username": "bXrRqnzE", "auth_password": "5sR7vZ"}  # fmt: skip
FC = {"target_discovered": False, "target_lun": 2,
      "target_wwn": ["500a098280feeba5", "500a098290feeba5"],
      "initiator_target_map": {"21000024ff406cc3": ["500a098280feeba5"]}}  # fmt: skip
RBD = {"name": f"volumes/volume-{VOLUME}", "hosts": ["10.0.0.11", "10.0.0.12"],
       "ports": ["6789", "6789"], "cluster_name": "ceph", "auth_enabled": True,
       "auth_username": "cinder", "secret_type": "ceph",
       "secret_uuid": "457eb676-33da-42ec-9a8c-9293d545c337"}  # fmt: skip
NFS = {"export": "192.168.122.5:/srv/cinder", "name": f"volume-{VOLUME}", "options": None,
       "format": "raw"}  # fmt: skip


def test_iscsi_with_chap_is_a_block_pv_pre_bound_to_the_volumes_claim() -> None:
    made = static_volume(VOLUME, cinder("iscsi", ISCSI), NS, KubevirtSettings(), INITIATOR)
    pv_name = static_volumes.pv_name(VOLUME, ATTACHMENT, NS)
    assert made.pv["metadata"]["name"] == pv_name
    assert made.pv["spec"] == {
        "capacity": {"storage": "3Gi"}, "accessModes": ["ReadWriteOnce"], "volumeMode": "Block",
        "persistentVolumeReclaimPolicy": "Retain", "storageClassName": "",
        "claimRef": {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "namespace": NS,
                     "name": f"volume-{VOLUME}"},
        "iscsi": {"targetPortal": "192.168.122.10:3260", "iqn": ISCSI["target_iqn"], "lun": 1,
                  "initiatorName": INITIATOR, "chapAuthSession": True,
                  "secretRef": {"name": pv_name, "namespace": NS}},
    }  # fmt: skip
    assert made.pvc["metadata"]["name"] == f"volume-{VOLUME}"
    assert made.pvc["metadata"]["namespace"] == NS
    assert made.pvc["spec"] == {
        "accessModes": ["ReadWriteOnce"], "volumeMode": "Block", "storageClassName": "",
        "volumeName": pv_name, "resources": {"requests": {"storage": "3Gi"}},
    }  # fmt: skip
    assert made.secret is not None and made.secret["type"] == "kubernetes.io/iscsi-chap"
    assert made.secret["metadata"] == {**made.secret["metadata"], "name": pv_name, "namespace": NS}
    assert made.secret["stringData"] == {"node.session.auth.username": "bXrRqnzE",
                                         "node.session.auth.password": "5sR7vZ"}  # fmt: skip


def test_iscsi_multipath_keeps_the_portals_of_the_same_target() -> None:
    other_iqn = "iqn.2010-10.org.openstack:other"
    data = {k: v for k, v in ISCSI.items() if not k.startswith("auth")}
    data.update(target_portals=["192.168.122.10:3260", "192.168.123.10:3260", "10.9.9.9:3260"],
                target_iqns=[ISCSI["target_iqn"], ISCSI["target_iqn"], other_iqn],
                target_luns=[1, 1, 4],
                discovery_auth_method="CHAP", discovery_auth_username="d",
                discovery_auth_password="p")  # fmt: skip
    made = static_volume(VOLUME, cinder("iscsi", data), NS, KubevirtSettings())
    source = made.pv["spec"]["iscsi"]
    assert source["portals"] == ["192.168.123.10:3260"]
    assert "chapAuthSession" not in source and source["chapAuthDiscovery"] is True
    assert made.secret is not None and set(made.secret["stringData"]) == {
        "discovery.sendtargets.auth.username", "discovery.sendtargets.auth.password"}  # fmt: skip


def test_fibre_channel_is_an_fc_source_and_multiattach_is_read_write_many() -> None:
    made = static_volume(VOLUME, cinder("fibre_channel", FC, multiattach=True), NS, KubevirtSettings())  # fmt: skip
    assert made.pv["spec"]["fc"] == {"targetWWNs": FC["target_wwn"], "lun": 2}
    assert made.pv["spec"]["accessModes"] == made.pvc["spec"]["accessModes"] == ["ReadWriteMany"]
    assert made.secret is None
    single = static_volume(VOLUME, cinder("fibre_channel", {**FC, "target_wwn": "500a098280feeba5"}), NS, KubevirtSettings())  # fmt: skip
    assert single.pv["spec"]["fc"]["targetWWNs"] == ["500a098280feeba5"]


def test_rbd_is_a_ceph_csi_static_volume() -> None:
    made = static_volume(VOLUME, cinder("rbd", RBD, size_gb=None), NS, CEPH)
    assert made.pv["spec"]["csi"] == {
        "driver": "rbd.csi.ceph.com", "volumeHandle": f"volume-{VOLUME}",
        "volumeAttributes": {"clusterID": CEPH.ceph_csi_cluster_id, "pool": "volumes",
                             "staticVolume": "true", "imageFeatures": "layering"},
        "nodeStageSecretRef": {"name": "csi-rbd-secret", "namespace": "ceph-csi"},
    }  # fmt: skip
    assert made.pv["spec"]["capacity"] == {"storage": "1Gi"}  # no size: what binds
    assert made.pv["spec"]["persistentVolumeReclaimPolicy"] == "Retain"


def test_rbd_without_the_ceph_csi_cluster_is_not_supported() -> None:
    with pytest.raises(errors.NotSupported, match="ceph_csi_cluster_id is not set"):
        static_volume(VOLUME, cinder("rbd", RBD), NS, KubevirtSettings())


def test_read_only_attachment_is_a_read_only_source() -> None:
    made = static_volume(VOLUME, cinder("rbd", {**RBD, "access_mode": "ro"}), NS, CEPH)
    assert made.pv["spec"]["csi"]["readOnly"] is True


@pytest.mark.parametrize(
    ("kind", "data", "match"),
    [
        ("nfs", NFS, r"'nfs' volume \(Cinder's NFS volume is a file of the export"),
        (
            "iscsi",
            {"access_mode": "rw"},
            r"'iscsi' volume \(Cinder's connection info has no 'target_iqn'\)",
        ),
        ("iscsi", {**ISCSI, "target_lun": "x"}, "target_lun 'x' is not a number"),
        ("fibre_channel", {"target_lun": 1}, "has no 'target_wwn'"),
        ("rbd", {"name": "image-only"}, "has no '<pool>/' prefix"),
        ("scaleio", {"scaleIO_volname": "x"}, r"'scaleio' volume \(no Kubernetes volume source"),
    ],
)
def test_what_kubernetes_cannot_mount_is_not_supported(kind: str, data: dict[str, Any], match: str) -> None:  # fmt: skip
    with pytest.raises(errors.NotSupported, match=match):
        static_volume(VOLUME, cinder(kind, data), NS, CEPH)


def test_claim_of_a_cinder_transport_is_the_volumes_pvc_with_the_connection_info() -> None:
    info = cinder("iscsi", ISCSI, multiattach=True)
    claim = claims.claim_of(VOLUME, info)
    assert (claim.name, claim.kind, claim.shared) == (f"volume-{VOLUME}", "persistentVolumeClaim", True)  # fmt: skip
    assert claim.static == info and claim.populate is None
    assert claims.volume_source(claim, hotpluggable=True) == {
        "persistentVolumeClaim": {"claimName": f"volume-{VOLUME}", "hotpluggable": True}}  # fmt: skip
    with pytest.raises(errors.NotSupported, match="'local' volume"):
        claims.claim_of(VOLUME, {"driver_volume_type": "local", "data": {}})


def test_without_an_attachment_the_pv_is_named_for_the_namespace() -> None:
    info = cinder("fibre_channel", FC)
    del info["attachment_id"]
    made = static_volume(VOLUME, info, NS, KubevirtSettings())
    assert made.pv["metadata"]["name"] == static_volumes.pv_name(VOLUME, None, NS)
    assert made.pv["metadata"]["name"] != static_volumes.pv_name(VOLUME, None, "other")


def test_a_portal_too_long_for_kubernetes_iscsi_interface_keeps_the_nodes_initiator() -> None:
    """Kubernetes wants ``<PV name>:<portal>`` under 64 characters to name the initiator."""
    portal = "[2001:0db8:85a3:0000:0000:8a2e:0370:7334]:3260"
    made = static_volume(VOLUME, cinder("iscsi", {**ISCSI, "target_portal": portal}), NS, KubevirtSettings(), INITIATOR)  # fmt: skip
    assert "initiatorName" not in made.pv["spec"]["iscsi"]
    short = static_volume(VOLUME, cinder("iscsi", ISCSI), NS, KubevirtSettings(), INITIATOR)
    assert len(f"{short.pv['metadata']['name']}:{ISCSI['target_portal']}") < 64
