"""A real Cinder's connection info as a statically bound PersistentVolume (decision 0080). Pure.

Cinder answers a host's connector with its own transport (os-brick's ``driver_volume_type``
and ``data``). Kubernetes has a volume source for most of them, which the node's kubelet
connects itself: the driver makes one cluster-scoped PersistentVolume per attachment (its
``claimRef`` pre-binds it to the PVC ``volume-<id>`` of the server's namespace, reclaim policy
``Retain``: the data stays Cinder's) and that PVC (``volumeName`` the PV, ``storageClassName``
empty: no provisioner takes it), then hot-plugs the PVC as for any other claim.

- ``iscsi`` {target_portal, target_iqn, target_lun, auth_method CHAP + auth_username /
  auth_password, discovery_auth_*; multipath: target_portals/target_iqns/target_luns} →
  ``iscsi`` {targetPortal, iqn, lun, portals (the other portals of the same target),
  chapAuthSession/chapAuthDiscovery + secretRef (a ``kubernetes.io/iscsi-chap`` Secret),
  initiatorName (the connector's, which Cinder exported the target to)};
- ``fibre_channel`` {target_wwn (one or a list), target_lun} → ``fc`` {targetWWNs, lun};
- ``rbd`` {name "<pool>/<image>", cluster_name, hosts...} → ceph-csi's static volume
  (``csi`` {driver rbd.csi.ceph.com, volumeHandle <image>, volumeAttributes {clusterID, pool,
  staticVolume "true", imageFeatures}, nodeStageSecretRef}), the cluster id and the secret
  from ``[kubevirt] ceph_csi_*`` (Cinder's connection info names neither);
- ``nfs`` {export "<server>:<path>", name <file>}: NotSupported. Cinder's NFS volume is the
  file ``<export>/<name>``; Kubernetes' ``nfs`` source mounts a directory (Filesystem mode
  only) and KubeVirt uses that directory's ``disk.img``, which would be a disk shared by every
  volume of the export and not the volume's file;
- anything else: NotSupported naming the type.

``volumeMode: Block`` (the guest's disk is the LUN or the image itself); ``ReadWriteMany`` for
a multiattach volume, else ``ReadWriteOnce``; ``readOnly`` when Cinder's ``access_mode`` is
``ro``; capacity the volume's size (``size_gb`` beside ``data``, which the Cinder adapter adds;
1 GiB when missing: binding only needs the PV to hold the request).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass

from openkeel.virt import errors
from openkeel.virt.kubevirt.client import JsonObj
from openkeel.virt.kubevirt.manifests import naming
from openkeel.virt.kubevirt.manifests.settings import KubevirtSettings
from openkeel.virt.model import JsonValue

ISCSI, FIBRE_CHANNEL, RBD, NFS = "iscsi", "fibre_channel", "rbd", "nfs"
TRANSPORTS = frozenset({ISCSI, FIBRE_CHANNEL, RBD, NFS})
CEPH_RBD_DRIVER = "rbd.csi.ceph.com"
CHAP_SECRET_TYPE = "kubernetes.io/iscsi-chap"
ANNOTATION_ATTACHMENT_ID = f"{naming.DOMAIN}/attachment-id"
ANNOTATION_PERSISTENT_VOLUME = f"{naming.DOMAIN}/static-persistent-volume"
LABEL_VOLUME_ID = f"{naming.DOMAIN}/volume-id"
READ_WRITE_ONCE, READ_WRITE_MANY = "ReadWriteOnce", "ReadWriteMany"
PV_DIGEST_LEN = 12
ISCSI_IFACE_MAX = 64  # Kubernetes' validation: len("<PV name>:<targetPortal>") < 64


@dataclass(frozen=True)
class StaticVolume:
    """The objects a Cinder attachment becomes: the PV, its PVC and (iSCSI CHAP) a Secret in
    the server's namespace."""

    pv: JsonObj
    pvc: JsonObj
    secret: JsonObj | None = None


def _unsupported(kind: str, why: str) -> errors.NotSupported:
    return errors.NotSupported(f"attach_volume of a '{kind}' volume ({why})", "kubevirt")


def _required(kind: str, data: Mapping[str, object], key: str) -> object:
    value = data.get(key)
    if value is None or value == "" or (isinstance(value, list) and not value):
        raise _unsupported(kind, f"Cinder's connection info has no '{key}'")
    return value


def _lun(kind: str, data: Mapping[str, object]) -> int:
    lun = _required(kind, data, "target_lun")
    if isinstance(lun, bool) or not isinstance(lun, int | str) or not str(lun).isdigit():
        raise _unsupported(kind, f"target_lun {lun!r} is not a number")
    return int(lun)


def pv_name(volume_id: str, attachment_id: str | None, namespace: str) -> str:
    """The PV of one attachment: ``cinder-`` and a digest of the volume id and the attachment
    (the namespace when the connection info has no attachment). Short, because Kubernetes
    wants ``<PV name>:<targetPortal>`` under 64 characters when an iSCSI source names its
    initiator; the volume and attachment ids are the PV's label and annotations."""
    digest = hashlib.sha256(f"{volume_id}:{attachment_id or namespace}".encode()).hexdigest()
    return f"cinder-{digest[:PV_DIGEST_LEN]}"


def _iscsi(
    data: Mapping[str, object], secret: str, namespace: str, initiator: str | None
) -> tuple[JsonObj, dict[str, str] | None]:
    iqn = str(_required(ISCSI, data, "target_iqn"))
    portal = str(_required(ISCSI, data, "target_portal"))
    source: JsonObj = {"targetPortal": portal, "iqn": iqn, "lun": _lun(ISCSI, data)}
    portals, iqns = data.get("target_portals"), data.get("target_iqns")
    if isinstance(portals, list) and isinstance(iqns, list) and len(portals) == len(iqns):
        # Kubernetes' portals share the target's iqn and lun: other targets are left out.
        same = [str(p) for p, q in zip(portals, iqns, strict=True) if q == iqn and p != portal]
        if same:
            source["portals"] = same
    if initiator and len(f"{secret}:{portal}") < ISCSI_IFACE_MAX:
        # The interface Kubernetes makes is named <PV name>:<portal>; a longer portal keeps
        # the node's own initiator name (Cinder must then export to it).
        source["initiatorName"] = initiator
    chap: dict[str, str] = {}
    if str(data.get("auth_method") or "").upper() == "CHAP":
        source["chapAuthSession"] = True
        chap["node.session.auth.username"] = str(_required(ISCSI, data, "auth_username"))
        chap["node.session.auth.password"] = str(_required(ISCSI, data, "auth_password"))
    if str(data.get("discovery_auth_method") or "").upper() == "CHAP":
        source["chapAuthDiscovery"] = True
        chap["discovery.sendtargets.auth.username"] = str(_required(ISCSI, data, "discovery_auth_username"))  # fmt: skip
        chap["discovery.sendtargets.auth.password"] = str(_required(ISCSI, data, "discovery_auth_password"))  # fmt: skip
    if chap:
        source["secretRef"] = {"name": secret, "namespace": namespace}
    return {"iscsi": source}, chap or None


def _fc(data: Mapping[str, object]) -> JsonObj:
    wwns = _required(FIBRE_CHANNEL, data, "target_wwn")
    targets = [str(w) for w in wwns] if isinstance(wwns, list) else [str(wwns)]
    return {"fc": {"targetWWNs": targets, "lun": _lun(FIBRE_CHANNEL, data)}}


def _rbd(data: Mapping[str, object], settings: KubevirtSettings) -> JsonObj:
    pool, _, image = str(_required(RBD, data, "name")).partition("/")
    if not image:
        raise _unsupported(RBD, f"the image name {pool!r} has no '<pool>/' prefix")
    if not settings.ceph_csi_cluster_id:
        raise _unsupported(
            RBD,
            f"[kubevirt] ceph_csi_cluster_id is not set: which ceph-csi cluster is Cinder's "
            f"Ceph cluster {data.get('cluster_name') or 'ceph'!s}",
        )
    csi: JsonObj = {
        "driver": CEPH_RBD_DRIVER,
        "volumeHandle": image,
        "volumeAttributes": {
            "clusterID": settings.ceph_csi_cluster_id,
            "pool": pool,
            "staticVolume": "true",
            "imageFeatures": settings.ceph_csi_image_features,
        },
    }
    ns, _, name = settings.ceph_csi_node_stage_secret.partition("/")
    if ns and name:
        csi["nodeStageSecretRef"] = {"name": name, "namespace": ns}
    return {"csi": csi}


def static_volume(
    volume_id: str,
    connection_info: Mapping[str, JsonValue],
    namespace: str,
    settings: KubevirtSettings,
    initiator: str | None = None,
) -> StaticVolume:
    """The PV, PVC (and CHAP Secret) of ``connection_info``; NotSupported for a transport
    Kubernetes cannot give a pod, or connection info missing what the transport needs."""
    kind = str(connection_info.get("driver_volume_type"))
    raw = connection_info.get("data")
    data: Mapping[str, object] = raw if isinstance(raw, Mapping) else {}
    attachment = connection_info.get("attachment_id")
    claim = naming.volume_claim_name(volume_id)
    name = pv_name(volume_id, attachment if isinstance(attachment, str) else None, namespace)
    chap: dict[str, str] | None = None
    if kind == ISCSI:
        source, chap = _iscsi(data, name, namespace, initiator)
    elif kind == FIBRE_CHANNEL:
        source = _fc(data)
    elif kind == RBD:
        source = _rbd(data, settings)
    elif kind == NFS:
        raise _unsupported(
            kind,
            "Cinder's NFS volume is a file of the export; Kubernetes mounts the export's "
            "directory, where KubeVirt would use a disk.img shared by every volume",
        )
    else:
        raise _unsupported(kind, "no Kubernetes volume source for this transport")
    if data.get("access_mode") == "ro":
        next(iter(source.values()))["readOnly"] = True
    size = connection_info.get("size_gb")
    storage = f"{size if isinstance(size, int) and size > 0 else 1}Gi"
    modes = [READ_WRITE_MANY if connection_info.get("multiattach") is True else READ_WRITE_ONCE]
    labels = {naming.LABEL_MANAGED_BY: naming.MANAGED_BY, LABEL_VOLUME_ID: volume_id}
    annotations = {naming.ANNOTATION_VOLUME_ID: volume_id}
    if isinstance(attachment, str):
        annotations[ANNOTATION_ATTACHMENT_ID] = attachment
    pv: JsonObj = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name, "labels": dict(labels), "annotations": dict(annotations)},
        "spec": {
            "capacity": {"storage": storage},
            "accessModes": modes,
            "volumeMode": "Block",
            "persistentVolumeReclaimPolicy": "Retain",
            "storageClassName": "",
            "claimRef": {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                         "namespace": namespace, "name": claim},
            **source,
        },
    }  # fmt: skip
    pvc: JsonObj = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": claim, "namespace": namespace, "labels": dict(labels),
                     "annotations": {**annotations, ANNOTATION_PERSISTENT_VOLUME: name}},
        "spec": {"accessModes": modes, "volumeMode": "Block", "storageClassName": "",
                 "volumeName": name, "resources": {"requests": {"storage": storage}}},
    }  # fmt: skip
    secret = None
    if chap:
        secret = {
            "apiVersion": "v1",
            "kind": "Secret",
            "type": CHAP_SECRET_TYPE,
            "metadata": {"name": name, "namespace": namespace, "labels": dict(labels),
                         "annotations": dict(annotations)},
            "stringData": chap,
        }  # fmt: skip
    return StaticVolume(pv, pvc, secret)
