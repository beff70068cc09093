"""Cinder volumes of KubeVirt guests: claims named by connection info, hot-plug, unplug.

A volume is a PVC (or the CDI DataVolume that makes one) in the server's namespace. Which one
the connection info says (decision 0067): ``driver_volume_type: kubevirt`` with ``data``
``{volume_id, claim_name, claim_kind: persistentVolumeClaim | dataVolume, namespace (null: the
server's), size_gb, populate (a CDI DataVolume source to make it with when it is missing;
a DataVolume imported from another image than ``populate`` names is made again: the volume
service reimaged the volume, decision 0069)}``.
Connection info without a type (a block device mapping compute resolved without Cinder) names
the PVC ``volume-<id>``. A real Cinder's transport (iscsi, fibre_channel, rbd) becomes a
statically bound PersistentVolume and the PVC ``volume-<id>`` made here (decision 0080,
manifests/static_volumes.py), deleted again at detach and with the server (``Retain``: the
data stays Cinder's) unless another VM of the namespace still uses the claim. A ``local`` one
(the all-in-one's files), ``nfs`` or any other transport cannot be given to a pod:
NotSupported.

Attach/detach follow KubeVirt's hot-plug semantics: on a running VM the ``addvolume`` /
``removevolume`` subresources (feature gate ``HotplugVolumes``; a hot-plugged disk must be on
the scsi bus), then wait until the VMI's ``status.volumeStatus`` entry is ``Ready`` (or gone);
on a stopped VM the template is edited (the volume kept ``hotpluggable`` so that it can be
unplugged once the VM runs). A volume the VM was defined with (not hotpluggable) cannot be
hot-unplugged: KubeVirt refuses it, and so does the driver, clearly, while the guest runs.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Mapping
from typing import Any

from openkeel.domain.states import PowerState
from openkeel.virt import errors
from openkeel.virt.kubevirt import client as k
from openkeel.virt.kubevirt.base import KubevirtBase
from openkeel.virt.kubevirt.client import JsonObj, KubeError
from openkeel.virt.kubevirt.manifests import naming
from openkeel.virt.kubevirt.manifests.claims import (
    DATA_VOLUME,
    PVC,
    SERIAL_LEN,
    Claim,
    claim_of,
    hotplug_disk,
    volume_source,
)
from openkeel.virt.kubevirt.manifests.disks import CDI_API, image_source_ref, storage_spec
from openkeel.virt.kubevirt.manifests.static_volumes import (
    ANNOTATION_PERSISTENT_VOLUME,
    static_volume,
)
from openkeel.virt.model import InstanceRef, InstanceSpec, JsonValue, VolumeAttachment

LOG = logging.getLogger(__name__)

READY = "Ready"
FAILED_PHASES = frozenset({"Failed", "AttachmentFailed"})


def volume_status(vmi: JsonObj | None, name: str) -> JsonObj | None:
    for entry in (vmi or {}).get("status", {}).get("volumeStatus", []) or []:
        if entry.get("name") == name:
            found: JsonObj = entry
            return found
    return None


def _template(vm: JsonObj) -> JsonObj:
    spec: JsonObj = vm["spec"]["template"]["spec"]
    return spec


def _template_volume(vm: JsonObj, volume_id: str) -> JsonObj | None:
    """The template's volume of a Cinder volume: named for it (hot-plugged) or the volume
    whose disk carries its serial (defined with the VM)."""
    tmpl = _template(vm)
    serial = volume_id[:SERIAL_LEN]
    disks = {d.get("name") for d in tmpl.get("domain", {}).get("devices", {}).get("disks", []) or [] if d.get("serial") == serial}  # fmt: skip
    for volume in tmpl.get("volumes", []) or []:
        if volume.get("name") == naming.volume_claim_name(volume_id) or volume.get("name") in disks:
            found: JsonObj = volume
            return found
    return None


def _hotpluggable(volume: JsonObj) -> bool:
    return any(
        isinstance(volume.get(kind), dict) and volume[kind].get("hotpluggable") is True
        for kind in (PVC, DATA_VOLUME)
    )


def _feature_gate_refusal(exc: KubeError) -> bool:
    return exc.status == 400 and "feature gate" in exc.message.lower()


class VolumesMixin(KubevirtBase):
    """attach_volume / detach_volume on KubeVirt volume hot-plug."""

    def volume_connector(self) -> dict[str, JsonValue]:
        """Asks the volume service for ``kubevirt`` connection info (a PVC, decision 0067);
        a Cinder that does not know the key ignores it."""
        return {"kubevirt": True, "initiator": self._initiator()}

    def _initiator(self) -> str:
        """The iSCSI initiator name this host gives Cinder, which exports its targets to it;
        a static iSCSI PV logs in with it from whichever node runs the guest (decision 0080)."""
        return f"iqn.2010-10.org.openkeel:{naming.label_value(self.node).lower()}"

    def ensure_boot_claims(self, spec: InstanceSpec) -> None:
        """The DataVolumes of the volumes a guest is defined with (boot from volume), before
        its VM: the connection info of each says how to make it when it is missing."""
        for device in spec.block_devices:
            info = device.connection_info
            if device.destination_type == "volume" and device.volume_id and info.get("driver_volume_type"):  # fmt: skip
                self.ensure_claim(spec.ref, claim_of(device.volume_id, info))

    def _claim_namespace(self, ref: InstanceRef, claim: Claim) -> str:
        namespace = self._ns(ref)
        if claim.namespace not in (None, namespace):
            # A pod mounts claims of its own namespace only.
            raise errors.PermanentDriverError(
                f"Volume {claim.volume_id} is claim {claim.namespace}/{claim.name}, outside the "
                f"namespace {namespace} of instance {ref.uuid}."
            )
        return namespace

    def ensure_claim(self, ref: InstanceRef, claim: Claim) -> None:
        """Make the DataVolume of a volume the connection info says how to populate (the
        embedded volume service's volumes), once; it belongs to the volume, not the server
        (no owner, no server label: the server's delete leaves it). A real Cinder's volume:
        its static PV and PVC (:meth:`_ensure_static`)."""
        if claim.static is not None:
            self._ensure_static(ref, claim, claim.static)
            return
        if claim.kind != DATA_VOLUME or claim.populate is None:
            return
        namespace = self._claim_namespace(ref, claim)
        image_id = claim.populate.get("image_id")
        spec: JsonObj = {"storage": storage_spec(self.settings, claim.size_gb)}
        if claim.shared:  # hot-plugged into several VMs, possibly on several nodes
            spec["storage"]["accessModes"] = ["ReadWriteMany"]
        spec.update(self._populate(claim.populate, namespace))
        labels = {naming.LABEL_MANAGED_BY: naming.MANAGED_BY}
        annotations = {naming.ANNOTATION_VOLUME_ID: claim.volume_id}
        if isinstance(image_id, str):
            annotations[naming.ANNOTATION_IMAGE_ID] = image_id
        body = {
            "apiVersion": CDI_API,
            "kind": "DataVolume",
            "metadata": {"name": claim.name, "namespace": namespace, "labels": labels,
                         "annotations": annotations},
            "spec": spec,
        }  # fmt: skip
        self.client.ensure_namespace(namespace, {naming.LABEL_MANAGED_BY: naming.MANAGED_BY})
        if isinstance(image_id, str):
            self._drop_reimaged(namespace, claim, image_id)
        self._retrying(lambda: self.client.ensure(k.DATA_VOLUMES, body), f"creating the DataVolume of volume {claim.volume_id}")  # fmt: skip

    def _ensure_static(self, ref: InstanceRef, claim: Claim, info: Mapping[str, JsonValue]) -> None:
        """The PersistentVolume of a Cinder attachment and the PVC ``volume-<id>`` bound to
        it (decision 0080). A PVC of that name already in the namespace is the volume's (an
        earlier try, or another VM's attachment of a multiattach volume): kept as it is; one
        being deleted (its last detach) is waited for first."""
        namespace = self._claim_namespace(ref, claim)
        made = static_volume(claim.volume_id, info, namespace, self.settings, self._initiator())
        self.client.ensure_namespace(namespace, {naming.LABEL_MANAGED_BY: naming.MANAGED_BY})
        found = self.client.get_or_none(k.PVCS, claim.name, namespace)
        if found is not None and found["metadata"].get("deletionTimestamp"):
            self._wait_for(lambda: self.client.get_or_none(k.PVCS, claim.name, namespace) is None,
                           f"the claim of volume {claim.volume_id} to be deleted")  # fmt: skip
            found = None
        if found is not None:
            return
        what = f"binding volume {claim.volume_id} to a static PersistentVolume"
        if made.secret is not None:
            secret = made.secret
            self._retrying(lambda: self.client.ensure(k.SECRETS, secret), what)
        self._retrying(lambda: self.client.ensure(k.PVS, made.pv), what)
        self._retrying(lambda: self.client.ensure(k.PVCS, made.pvc), what)

    def release_static_claim(self, namespace: str, claim_name: str) -> None:
        """Delete the PVC, PV (and CHAP Secret) :meth:`_ensure_static` made, once no VM of
        the namespace uses the claim any more. Retain: Cinder keeps the data; its attachment
        is deleted by compute as for every driver. Deletion finishes in the background
        (Kubernetes' protection finalizers wait for the attachment pod to go)."""
        pvc = self.client.get_or_none(k.PVCS, claim_name, namespace)
        annotations = ((pvc or {}).get("metadata") or {}).get("annotations") or {}
        pv = annotations.get(ANNOTATION_PERSISTENT_VOLUME)
        if pvc is None or not isinstance(pv, str):
            return  # not a static claim of ours (a DataVolume's, an operator's)
        for vm in self.client.items(k.VMS, namespace):
            if any((v.get(PVC) or {}).get("claimName") == claim_name for v in _template(vm).get("volumes", []) or []):  # fmt: skip
                return  # another server's attachment of a multiattach volume
        self.client.delete(k.PVCS, claim_name, namespace)
        self.client.delete(k.PVS, pv)
        self.client.delete(k.SECRETS, pv, namespace)

    def release_static_claims(self, vm: JsonObj) -> None:
        """:meth:`release_static_claim` of every claim of a deleted VM."""
        namespace = vm["metadata"]["namespace"]
        names = [(v.get(PVC) or {}).get("claimName") for v in _template(vm).get("volumes", []) or []]  # fmt: skip

        def release() -> None:
            for name in names:
                if isinstance(name, str):
                    self.release_static_claim(namespace, name)

        self._retrying(release, f"releasing the static claims of {vm['metadata']['name']}")

    def _drop_reimaged(self, namespace: str, claim: Claim, image_id: str) -> None:
        """A volume reimaged by the volume service since its DataVolume was imported (the
        connection info names another image than the DataVolume records; a volume-backed
        rebuild at 2.93): the DataVolume and its claim are deleted, and made again from the
        new image by the caller. Only a DataVolume that records its image is replaced, and
        only here, where no guest uses it (the rebuild destroyed the old VM; an attach
        reaches a volume nobody holds)."""
        found = self.client.get_or_none(k.DATA_VOLUMES, claim.name, namespace)
        annotations = ((found or {}).get("metadata") or {}).get("annotations") or {}
        recorded = annotations.get(naming.ANNOTATION_IMAGE_ID)
        if found is None or recorded in (None, image_id):
            return
        LOG.info("Volume %s was reimaged from %s to %s: importing its DataVolume again",
                 claim.volume_id, recorded, image_id)  # fmt: skip
        # Background: CDI's claim is the DataVolume's dependent; the garbage collector takes
        # it (once no pod mounts it), and the new DataVolume may not meet the old claim.
        self.client.delete(k.DATA_VOLUMES, claim.name, namespace)

        def gone() -> bool:
            return (self.client.get_or_none(k.DATA_VOLUMES, claim.name, namespace) is None
                    and self.client.get_or_none(k.PVCS, claim.name, namespace) is None)  # fmt: skip

        self._wait_for(gone, f"deleting the DataVolume of reimaged volume {claim.volume_id}")

    def _populate(self, populate: Mapping[str, Any], namespace: str) -> JsonObj:
        """The DataVolume's source: the image's DataSource, a CDI clone of a snapshot's copy
        (``{"clone": {"name"}, "otherwise": ...}``: the other way when the copy is not in the
        namespace) or blank."""
        image_id, clone = populate.get("image_id"), populate.get("clone")
        if isinstance(image_id, str):
            return {"sourceRef": image_source_ref(image_id, self.settings)}
        if isinstance(clone, Mapping) and isinstance(clone.get("name"), str):
            if self.client.get_or_none(k.DATA_VOLUMES, clone["name"], namespace) is not None:
                return {"source": {"pvc": {"namespace": namespace, "name": clone["name"]}}}
            otherwise = populate.get("otherwise")
            if isinstance(otherwise, Mapping):
                return self._populate(otherwise, namespace)
        return {"source": {"blank": {}}}

    def attach_volume(self, instance: InstanceRef, attachment: VolumeAttachment) -> None:
        claim = claim_of(attachment.volume_id, attachment.connection_info)
        self._claim_namespace(instance, claim)
        name = naming.volume_claim_name(attachment.volume_id)
        vm = self._require_vm(instance)
        state, _vmi = self._state(instance)
        running = state != PowerState.SHUTDOWN
        if _template_volume(vm, attachment.volume_id) is None:
            self.ensure_claim(instance, claim)
            if running:
                options = {
                    "name": name,
                    "disk": hotplug_disk(name, attachment.volume_id, claim.shared),
                    "volumeSource": volume_source(claim, hotpluggable=True),
                }
                self._hotplug(instance, "attach_volume", lambda: self.virt_api.add_volume(self._ns(instance), self._name(instance), options))  # fmt: skip
            else:
                self._edit_volumes(instance, name, claim, attachment.volume_id)
        if running:
            self._wait_volume(
                instance,
                name,
                lambda: self._plugged(instance, name, attachment.volume_id),
                f"waiting for volume {attachment.volume_id} to be Ready on instance {instance.uuid}",
            )

    def detach_volume(self, instance: InstanceRef, volume_id: str) -> None:
        self._detach(instance, volume_id)
        claim, ns = naming.volume_claim_name(volume_id), self._ns(instance)
        self._retrying(lambda: self.release_static_claim(ns, claim), f"releasing the claim of volume {volume_id}")  # fmt: skip

    def _detach(self, instance: InstanceRef, volume_id: str) -> None:
        name = naming.volume_claim_name(volume_id)
        vm = self._require_vm(instance)
        state, vmi = self._state(instance)
        running = state != PowerState.SHUTDOWN
        volume = _template_volume(vm, volume_id)
        if volume is not None:
            name = volume["name"]
        if volume is not None:
            if running and not _hotpluggable(volume):
                raise errors.NotSupported(
                    f"detach_volume of volume {volume_id} while the guest runs (it was part of "
                    "the VM's definition, and KubeVirt hot-unplugs only hot-plugged volumes: "
                    "stop the server first)",
                    self.name,
                )
            if running:
                self._hotplug(instance, "detach_volume", lambda: self.virt_api.remove_volume(self._ns(instance), self._name(instance), name))  # fmt: skip
            else:
                self._edit_volumes(instance, name, None, volume_id)
        elif not running or volume_status(vmi, name) is None:
            return
        if running:
            self._wait_volume(
                instance,
                name,
                lambda: self._unplugged(instance, name),
                f"waiting for volume {volume_id} to leave instance {instance.uuid}",
            )

    def _hotplug(self, ref: InstanceRef, operation: str, call: Callable[[], None]) -> None:
        """A virt-api hot-plug request; NotSupported where the cluster has no hot-plug."""
        try:
            self._retrying(call, f"{operation} of {ref.uuid}")
        except errors.DriverError as exc:
            cause = exc.__cause__
            if isinstance(cause, k.ConflictError) and (
                "already exists" in cause.message or "does not exist" in cause.message
            ):
                return  # an earlier request of ours (its answer lost) is queued: wait for it
            if isinstance(cause, KubeError) and (
                _feature_gate_refusal(cause) or cause.status in (404, 405)
            ):
                # 400 "... HotplugVolumes feature gate not enabled"; 404/405: a virt-api
                # without the subresource at all.
                raise errors.NotSupported(
                    f"{operation} (the cluster's KubeVirt refuses volume hot-plug: {cause.message})",
                    self.name,
                ) from cause
            raise
        except k.NotFoundError as exc:
            raise errors.NotSupported(
                f"{operation} (the cluster's KubeVirt has no volume hot-plug: {exc.message})",
                self.name,
            ) from exc

    def _edit_volumes(
        self, ref: InstanceRef, name: str, claim: Claim | None, volume_id: str
    ) -> None:
        """A stopped VM: add (``claim``) or remove (None) the volume in its template."""

        def edit(vm: JsonObj) -> bool | None:
            tmpl = _template(vm)
            volumes = [v for v in tmpl.get("volumes", []) or [] if v.get("name") != name]
            devices = tmpl.setdefault("domain", {}).setdefault("devices", {})
            disks = [d for d in devices.get("disks", []) or [] if d.get("name") != name]
            if claim is not None:
                volumes.append({"name": name, **volume_source(claim, hotpluggable=True)})
                disks.append(hotplug_disk(name, volume_id, claim.shared))
            if volumes == tmpl.get("volumes", []) and disks == devices.get("disks", []):
                return False
            tmpl["volumes"], devices["disks"] = volumes, disks
            return None

        try:
            self._retrying(
                lambda: self.client.update(k.VMS, self._name(ref), edit, self._ns(ref)),
                f"editing the volumes of {ref.uuid}",
            )
        except k.NotFoundError as exc:
            raise errors.InstanceNotFound(ref.uuid) from exc

    def _wait_volume(
        self, ref: InstanceRef, name: str, check: Callable[[], bool], what: str
    ) -> None:
        """``_wait_for`` whose time-out says where the hot-plug stopped (the VMI's
        ``status.volumeStatus`` entry: phase, reason, message)."""
        try:
            self._wait_for(check, what)
        except errors.TransientDriverError as exc:
            with contextlib.suppress(KubeError):
                entry = volume_status(self._vmi(ref)[0], name)
                where = (
                    "no volumeStatus entry"
                    if entry is None
                    else " ".join(
                        str(entry.get(key))
                        for key in ("phase", "reason", "message")
                        if entry.get(key)
                    )
                )
                raise errors.TransientDriverError(f"{exc} (VMI volumeStatus: {where})") from exc
            raise

    def _plugged(self, ref: InstanceRef, name: str, volume_id: str) -> bool:
        vmi, _version = self._vmi(ref)
        if vmi is None:
            # Stopped meanwhile: the template holds the volume, the next start plugs it.
            return True
        entry = volume_status(vmi, name)
        if entry is None:
            return False
        if entry.get("phase") in FAILED_PHASES:
            raise errors.PermanentDriverError(
                f"Volume {volume_id} could not be attached to instance {ref.uuid}: "
                f"{entry.get('phase')} {entry.get('reason', '')} {entry.get('message', '')}".strip()
            )
        return bool(entry.get("phase") == READY)

    def _unplugged(self, ref: InstanceRef, name: str) -> bool:
        vmi, _version = self._vmi(ref)
        if vmi is None:
            return True
        in_spec = any(v.get("name") == name for v in vmi["spec"].get("volumes", []) or [])
        return not in_spec and volume_status(vmi, name) is None


__all__ = ["VolumesMixin", "volume_status"]
