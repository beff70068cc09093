"""What the cluster keeps per image, removed once the image is deleted (Nova's
``manage_image_cache``, run by compute's image cache manager pass).

Per image the driver leaves in ``[kubevirt] images_namespace`` a CDI DataVolume and a DataSource
named ``image-<id>`` (an import of the image, or the clone a snapshot made: decision 0051), and,
for a snapshot, the VirtualMachineSnapshot it was cloned from in the server's namespace (and
an export of it with its token Secret, if a download was cut short). All carry the image id
(annotation on the images, label on the others). Once the image service says the image is gone they serve nobody: a new server cannot name the image, and servers
already booted from it have their own root PVC (CDI's clone is complete before the VM runs).
Mixed into KubevirtDriver.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from openkeel.virt.kubevirt import client as k
from openkeel.virt.kubevirt.base import KubevirtBase
from openkeel.virt.kubevirt.client import JsonObj, KubeError
from openkeel.virt.kubevirt.manifests import naming

LOG = logging.getLogger(__name__)

MANAGED = f"{naming.LABEL_MANAGED_BY}={naming.MANAGED_BY}"


class ImagesMixin(KubevirtBase):
    """manage_image_cache over the images namespace and the VM snapshots."""

    def manage_image_cache(self, image_gone: Callable[[str], bool]) -> list[str]:
        namespace = self.settings.images_namespace
        held: dict[str, list[tuple[k.Resource, JsonObj]]] = {}
        for res in (k.DATA_SOURCES, k.DATA_VOLUMES):
            for obj in self.client.items(res, namespace, label_selector=MANAGED):
                image_id = (obj["metadata"].get("annotations") or {}).get(
                    naming.ANNOTATION_IMAGE_ID
                )
                if image_id:
                    held.setdefault(image_id, []).append((res, obj))
        # VM snapshots, and exports with their token Secrets a compute host left (it died
        # mid-download; KubeVirt also deletes an export at its ttlDuration): decision 0071
        snapshots: dict[str, list[tuple[k.Resource, JsonObj]]] = {}
        for res in (k.VM_SNAPSHOTS, k.VM_EXPORTS, k.SECRETS):
            for obj in self.client.items(res, None, label_selector=naming.LABEL_IMAGE_ID):
                image_id = obj["metadata"]["labels"][naming.LABEL_IMAGE_ID]
                snapshots.setdefault(image_id, []).append((res, obj))
        removed = []
        for image_id in sorted(held.keys() | snapshots.keys()):
            if not image_gone(image_id):
                continue
            LOG.info("Image %s is deleted: removing what the cluster kept for it", image_id)
            objects = [
                *held.get(image_id, ()),
                *snapshots.get(image_id, ()),
            ]
            try:
                for res, obj in objects:
                    meta = obj["metadata"]
                    self.client.delete(res, meta["name"], meta.get("namespace"))
            except KubeError as exc:
                LOG.warning("Could not remove the cluster objects of image %s: %s", image_id, exc)
                continue
            removed.append(image_id)
        return removed
