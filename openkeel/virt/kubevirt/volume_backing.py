"""The embedded volume service's side in the cluster (decision 0071, issue 13 leftovers).

On a KubeVirt host a volume of the embedded service is the CDI DataVolume ``volume-<id>`` in
its project's namespace (decision 0067), made by the compute host at the first attach. It has no
owner (it outlives servers), so nothing removes it when the volume is deleted: the volume
service tells :class:`ClusterVolumes` after it deleted a volume, and when it takes or deletes a
snapshot (a CDI clone of the volume's DataVolume is the snapshot's point-in-time copy, which a
volume made from the snapshot clones: CDI's PVC clone; the test cluster has no VolumeSnapshot
API). A client per call (a
volume delete is rare; the API process holds no watch or pool for it).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from openkeel.virt.kubevirt import client as k
from openkeel.virt.kubevirt.client import KubeClient, KubeError
from openkeel.virt.kubevirt.manifests import naming

LOG = logging.getLogger(__name__)


class ClusterVolumes:
    """The embedded volume service's DataVolumes in the cluster (its ``ClusterBacking``)."""

    def __init__(
        self, connect: Callable[[], KubeClient], namespace_scheme: str, storage_class: str = ""
    ) -> None:
        self._connect = connect
        self._scheme = namespace_scheme
        self._storage_class = storage_class

    def volume_deleted(self, volume_id: str, project_id: str) -> None:
        # CDI's DataVolume owns its PVC: the garbage collector removes that. A claim the
        # driver did not make (a CSI-backed Cinder's, claim_kind persistentVolumeClaim) is not
        # ours to delete.
        self._delete(project_id, naming.volume_claim_name(volume_id), f"volume {volume_id}")

    def snapshot_created(self, snapshot_id: str, volume_id: str, project_id: str) -> None:
        """The snapshot's point-in-time copy: a CDI clone (``spec.source.pvc``) of the volume's
        DataVolume, ``volume-snapshot-<id>``, which a volume made from the snapshot clones in
        turn. Nothing when the volume has no DataVolume yet (it never reached the cluster: the
        snapshot holds what the volume was made from)."""
        namespace = naming.namespace_for(project_id, self._scheme)
        source = naming.volume_claim_name(volume_id)
        client = self._connect()
        try:
            if client.get_or_none(k.DATA_VOLUMES, source, namespace) is None:
                return
            client.ensure(k.DATA_VOLUMES, {
                "metadata": {"name": snapshot_claim_name(snapshot_id), "namespace": namespace,
                             "labels": {naming.LABEL_MANAGED_BY: naming.MANAGED_BY},
                             "annotations": {naming.ANNOTATION_VOLUME_ID: volume_id,
                                             ANNOTATION_SNAPSHOT_ID: snapshot_id}},
                "spec": {"source": {"pvc": {"namespace": namespace, "name": source}}, "storage": {}},
            })  # fmt: skip
        except KubeError as exc:
            LOG.warning("Snapshot %s of volume %s has no copy in the cluster: %s", snapshot_id, volume_id, exc)  # fmt: skip
        finally:
            client.close()

    def volume_cloned(self, volume_id: str, source_id: str, size_gb: int, project_id: str) -> str:
        """A volume created from another (Cinder's ``source_volid``): its own DataVolume
        ``volume-<id>``, made now as a CDI clone (``spec.source.pvc``) of the source's, so it
        holds the source's data as of its creation (Cinder's clone). The volume's status:
        ``creating`` until CDI has cloned it (``clone_status``); ``available`` when the source
        has no DataVolume (it never reached the cluster: the compute host makes the volume as
        the source was made); ``error`` when the clone could not be requested."""
        namespace = naming.namespace_for(project_id, self._scheme)
        source = naming.volume_claim_name(source_id)
        storage: k.JsonObj = {"resources": {"requests": {"storage": f"{size_gb}Gi"}}}
        if self._storage_class:
            storage["storageClassName"] = self._storage_class
        client = self._connect()
        try:
            if client.get_or_none(k.DATA_VOLUMES, source, namespace) is None:
                return "available"
            client.ensure(k.DATA_VOLUMES, {
                "metadata": {"name": naming.volume_claim_name(volume_id), "namespace": namespace,
                             "labels": {naming.LABEL_MANAGED_BY: naming.MANAGED_BY},
                             "annotations": {naming.ANNOTATION_VOLUME_ID: volume_id,
                                             ANNOTATION_SOURCE_VOLUME_ID: source_id}},
                "spec": {"source": {"pvc": {"namespace": namespace, "name": source}}, "storage": storage},
            })  # fmt: skip
        except KubeError as exc:
            LOG.warning("Volume %s could not be cloned from volume %s in the cluster: %s", volume_id, source_id, exc)  # fmt: skip
            return "error"
        finally:
            client.close()
        return "creating"

    def clone_status(self, volume_id: str, project_id: str) -> str:
        """The status of a volume CDI is cloning: ``available`` once its DataVolume's phase is
        ``Succeeded``, ``error`` when ``Failed`` or gone, else still ``creating`` (also while
        the API server cannot be asked)."""
        namespace = naming.namespace_for(project_id, self._scheme)
        client = self._connect()
        try:
            found = client.get_or_none(k.DATA_VOLUMES, naming.volume_claim_name(volume_id), namespace)  # fmt: skip
        except KubeError as exc:
            LOG.warning("The clone of volume %s cannot be looked at: %s", volume_id, exc)
            return "creating"
        finally:
            client.close()
        phase = ((found or {}).get("status") or {}).get("phase")
        return {"Succeeded": "available", "Failed": "error"}.get(str(phase), "error" if found is None else "creating")  # fmt: skip

    def snapshot_deleted(self, snapshot_id: str, project_id: str) -> None:
        self._delete(project_id, snapshot_claim_name(snapshot_id), f"snapshot {snapshot_id}")

    def _delete(self, project_id: str, name: str, what: str) -> None:
        namespace = naming.namespace_for(project_id, self._scheme)
        client = self._connect()
        try:
            client.delete(k.DATA_VOLUMES, name, namespace)
        except KubeError as exc:
            LOG.warning("The %s is deleted but its DataVolume %s/%s stays: %s", what, namespace, name, exc)  # fmt: skip
        finally:
            client.close()


ANNOTATION_SNAPSHOT_ID = f"{naming.DOMAIN}/volume-snapshot-id"
ANNOTATION_SOURCE_VOLUME_ID = f"{naming.DOMAIN}/source-volume-id"


def snapshot_claim_name(snapshot_id: str) -> str:
    return naming.dns_label(f"volume-snapshot-{snapshot_id}")
