"""A Cinder volume's claim in the cluster, from its connection info (decision 0067). Pure.

``driver_volume_type: kubevirt`` connection info names the PVC (or CDI DataVolume) a volume is
in the server's namespace: ``data {volume_id, claim_name, claim_kind: persistentVolumeClaim |
dataVolume, namespace (null: the server's), size_gb, populate ({"blank": {}} or {"image_id"}:
how to make the DataVolume when it is missing)}``; ``multiattach: True`` beside ``data`` (a
multiattach volume, decision 0075) makes the disk ``shareable`` and the DataVolume
ReadWriteMany, so the same claim can be hot-plugged into several VMs. Connection info without a type (a mapping
resolved without Cinder) names the PVC ``volume-<id>``. A real Cinder's transports (iscsi,
fibre_channel, rbd, nfs) name the PVC ``volume-<id>`` too, which the driver binds to a static
PersistentVolume made from the connection info (``Claim.static``, decision 0080:
manifests/static_volumes.py says which transports Kubernetes can mount). Any other type (the
all-in-one's ``local`` files) is not something a pod can mount: NotSupported.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from openkeel.virt import errors
from openkeel.virt.kubevirt.client import JsonObj
from openkeel.virt.kubevirt.manifests import naming
from openkeel.virt.kubevirt.manifests.static_volumes import TRANSPORTS
from openkeel.virt.model import JsonValue

DRIVER_VOLUME_TYPE = "kubevirt"
PVC = "persistentVolumeClaim"
DATA_VOLUME = "dataVolume"
HOTPLUG_BUS = "scsi"  # KubeVirt's webhook: "hotplugged Disk %s does not use a scsi bus"
SERIAL_LEN = 20


@dataclass(frozen=True)
class Claim:
    """The PVC (or DataVolume) a Cinder volume is, in the server's namespace."""

    volume_id: str
    name: str
    kind: str = PVC  # the VM volume source: persistentVolumeClaim | dataVolume
    namespace: str | None = None  # None: the server's
    size_gb: int | None = None
    populate: Mapping[str, JsonValue] | None = None  # {"blank": {}} | {"image_id": ...}
    shared: bool = False  # a multiattach volume: in several VMs at once (ReadWriteMany)
    # A real Cinder's connection info (iscsi, rbd...): the PVC is bound to a static PV made
    # from it (decision 0080).
    static: Mapping[str, JsonValue] | None = None


def claim_of(volume_id: str, connection_info: Mapping[str, JsonValue]) -> Claim:
    """The claim ``connection_info`` names; NotSupported for what a pod cannot mount."""
    kind = connection_info.get("driver_volume_type")
    shared = connection_info.get("multiattach") is True
    if kind is None:
        legacy = connection_info.get("claim_name")  # a mapping's own (manifests/disks.py)
        own = legacy if isinstance(legacy, str) else naming.volume_claim_name(volume_id)
        return Claim(volume_id, own, shared=shared)
    if kind in TRANSPORTS:
        bound = naming.volume_claim_name(volume_id)
        return Claim(volume_id, bound, PVC, shared=shared, static=connection_info)
    if kind != DRIVER_VOLUME_TYPE:
        # The all-in-one's simulated volumes are files beside the API (decision 0057).
        raise errors.NotSupported(
            f"attach_volume of a '{kind}' volume (KubeVirt guests reach volumes only as "
            "PersistentVolumeClaims: 'kubevirt' connection info)",
            "kubevirt",
        )
    raw = connection_info.get("data")
    data: Mapping[str, object] = raw if isinstance(raw, Mapping) else {}
    name, claim_kind = data.get("claim_name"), data.get("claim_kind")
    namespace, size, populate = data.get("namespace"), data.get("size_gb"), data.get("populate")
    return Claim(
        volume_id,
        name if isinstance(name, str) and name else naming.volume_claim_name(volume_id),
        claim_kind if isinstance(claim_kind, str) and claim_kind in (PVC, DATA_VOLUME) else PVC,
        namespace if isinstance(namespace, str) and namespace else None,
        size if isinstance(size, int) and size > 0 else None,
        populate if isinstance(populate, Mapping) else None,
        shared,
    )


def volume_source(claim: Claim, *, hotpluggable: bool) -> JsonObj:
    """The VM volume source of a claim (``hotpluggable`` as KubeVirt's field)."""
    if claim.kind == DATA_VOLUME:
        source: JsonObj = {"name": claim.name}
    else:
        source = {"claimName": claim.name}
    if hotpluggable:
        source["hotpluggable"] = True
    return {claim.kind: source}


def hotplug_disk(name: str, volume_id: str, shareable: bool = False) -> JsonObj:
    """A hot-pluggable disk; ``shareable`` (KubeVirt's Disk field) for a multiattach volume,
    so that several VMs may write the same claim."""
    disk: JsonObj = {"name": name, "disk": {"bus": HOTPLUG_BUS}, "serial": volume_id[:SERIAL_LEN]}
    if shareable:
        disk["shareable"] = True
    return disk
