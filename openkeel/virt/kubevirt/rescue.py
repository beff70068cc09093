"""Rescue emulation for KubeVirt (it has none): boot a rescue disk, keep the root disk second.

Mixed into KubevirtDriver. rescue(): stop, save the VM template in an annotation, add the rescue
image as the first boot disk (a containerDisk or a DataVolume template cloning the image's CDI
DataSource, per ``[kubevirt] image_source_policy``), start. unrescue(): stop, put the saved
template back (the rescue DataVolume goes with the template), start.
"""

from __future__ import annotations

import json

from openkeel.domain.states import PowerState
from openkeel.virt import errors
from openkeel.virt.kubevirt import client as k
from openkeel.virt.kubevirt.base import KubevirtBase, driver_error
from openkeel.virt.kubevirt.client import JsonObj, KubeError
from openkeel.virt.kubevirt.manifests import disks, naming
from openkeel.virt.kubevirt.manifests.settings import IMAGE_SOURCE_CONTAINERDISK
from openkeel.virt.model import ImageSpec, InstanceRef, InstanceSpec

ANNOTATION_RESCUE = f"{naming.DOMAIN}/pre-rescue"
RESCUE_DISK = "rescue"


class RescueMixin(KubevirtBase):
    """rescue / unrescue by rewriting the VM's disks."""

    def _rescue_source(self, ref: InstanceRef, image: ImageSpec) -> tuple[JsonObj, JsonObj | None]:
        """(volume, dataVolumeTemplate or None) of the rescue disk."""
        if self.settings.image_source_policy == IMAGE_SOURCE_CONTAINERDISK:
            source = {"containerDisk": {"image": disks.containerdisk_image(image, self.settings)}}
            return {"name": RESCUE_DISK, **source}, None
        dv_name = naming.local_data_volume_name(ref.uuid, RESCUE_DISK)
        template = {
            "metadata": {"name": dv_name, "labels": naming.server_labels(ref.uuid, ref.project_id, "rescue")},
            "spec": {"sourceRef": disks.image_source_ref(image.image_id, self.settings),
                     "storage": disks.storage_spec(self.settings, None)},
        }  # fmt: skip
        return {"name": RESCUE_DISK, "dataVolume": {"name": dv_name}}, template

    def rescue(
        self, instance: InstanceSpec, rescue_image: ImageSpec, rescue_password: str | None
    ) -> None:
        ref = instance.ref
        vm = self._require_vm(ref)
        if ANNOTATION_RESCUE not in vm["metadata"].get("annotations", {}):
            volume, template = self._rescue_source(ref, rescue_image)
            self._stop(ref)
            self._rewrite(ref, lambda current: _add_rescue_disk(current, volume, template))
        self._start(ref)

    def unrescue(self, instance: InstanceRef) -> None:
        vm = self._require_vm(instance)
        if ANNOTATION_RESCUE in vm["metadata"].get("annotations", {}):
            self._stop(instance)
            self._rewrite(instance, _restore)
        self._start(instance)

    def _rewrite(self, ref: InstanceRef, mutate: k.Mutator) -> None:
        try:
            self.client.update(k.VMS, self._name(ref), mutate, self._ns(ref))
        except k.NotFoundError as exc:
            raise errors.InstanceNotFound(ref.uuid) from exc
        except KubeError as exc:
            raise driver_error(exc) from exc


def _add_rescue_disk(vm: JsonObj, volume: JsonObj, template: JsonObj | None) -> None:
    spec = vm["spec"]
    saved = {"template": spec["template"], "dataVolumeTemplates": spec.get("dataVolumeTemplates")}
    vm["metadata"].setdefault("annotations", {})[ANNOTATION_RESCUE] = json.dumps(saved)
    tmpl = spec["template"]["spec"]
    devices = tmpl["domain"].setdefault("devices", {})
    for disk in devices.get("disks", []):
        disk.pop("bootOrder", None)
    devices["disks"] = [{"name": RESCUE_DISK, "disk": {"bus": "virtio"}, "bootOrder": 1}, *devices.get("disks", [])]  # fmt: skip
    tmpl["volumes"] = [volume, *tmpl.get("volumes", [])]
    if template is not None:
        spec["dataVolumeTemplates"] = [*(spec.get("dataVolumeTemplates") or []), template]


def _restore(vm: JsonObj) -> None:
    saved = json.loads(vm["metadata"]["annotations"].pop(ANNOTATION_RESCUE))
    vm["spec"]["template"] = saved["template"]
    if saved["dataVolumeTemplates"] is None:
        vm["spec"].pop("dataVolumeTemplates", None)
    else:
        vm["spec"]["dataVolumeTemplates"] = saved["dataVolumeTemplates"]


__all__ = ["ANNOTATION_RESCUE", "PowerState", "RescueMixin"]
