"""KubeVirt volume hot-plug, for the simulator (tests/virt/kubevirt/simulator.py).

What it keeps of KubeVirt's documented semantics (user guide "Hotplug Volumes", the
``addvolume``/``removevolume`` subresources of ``subresources.kubevirt.io/v1``), including those
that make the driver's job harder:

- the subresources answer 400 while the cluster's ``HotplugVolumes`` feature gate is off
  (:attr:`Hotplug.enabled`), for adds and removes alike;
- ``AddVolumeOptions`` needs a name, a disk and one volume source (``persistentVolumeClaim`` or
  ``dataVolume``; virt-api marks it ``hotpluggable``); a hot-plugged disk must be on the
  ``scsi`` bus and cannot be a cdrom (virt-api's webhook: "hotplugged Disk %s does not use a
  scsi bus"); a name already used by a volume (or a pending request) is refused;
- only hot-plugged (``hotpluggable``) volumes can be removed: a volume of the VM's definition
  is refused;
- virt-api does not edit the VM: it queues the request in ``vm.status.volumeRequests``;
  virt-controller then edits the VM template and, when a VMI runs, the VMI spec;
- on the VMI, each hot-plugged volume goes ``Pending`` (until its PVC exists, and is Bound
  when it has no StorageClass (sim_binding), or its DataVolume has Succeeded) → ``AttachedToNode`` (an attachment pod ``hp-volume-*`` exists in
  the namespace, on the VMI's node) → ``MountedToPod`` → ``Ready`` in ``status.volumeStatus``,
  one phase per event, never at once; an unplugged one goes ``Detaching`` and then leaves the
  list, its attachment pod deleted. Hotpluggable volumes of a VM's template are plugged the
  same way after its VMI starts.
"""

from __future__ import annotations

import copy
import secrets

from openkeel.virt.kubevirt import client as k
from openkeel.virt.kubevirt.client import JsonObj, KubeClient

SOURCES = ("persistentVolumeClaim", "dataVolume")
PHASES = ["Pending", "AttachedToNode", "MountedToPod", "Ready"]
DETACHING = "Detaching"
POD_LABEL = "kubevirt.io"  # KubeVirt labels attachment pods kubevirt.io=hotplug-disk
POD_VALUE = "hotplug-disk"
VMI_LABEL = "sim.openkeel/vmi"  # the stand-in's link from an attachment pod to its VMI


def bad_request(message: str) -> k.KubeError:
    return k.KubeError(400, "BadRequest", message)


def _hotpluggable(volume: JsonObj) -> bool:
    return any(isinstance(volume.get(s), dict) and volume[s].get("hotpluggable") for s in SOURCES)


class Hotplug:
    """The virt-api side: requests queued on the VM (``status.volumeRequests``)."""

    def __init__(self, client: KubeClient) -> None:
        self.client = client
        self.enabled = True  # KubeVirt CR: developerConfiguration.featureGates HotplugVolumes

    def _gate(self, what: str) -> None:
        if not self.enabled:
            raise bad_request(f"Unable to {what} Volume, HotplugVolumes feature gate not enabled.")

    def add(self, namespace: str, vm: str, options: JsonObj) -> None:
        self._gate("Add")
        name, disk, source = options.get("name"), options.get("disk"), options.get("volumeSource")
        if not name:
            raise bad_request("AddVolumeOptions requires name to be set")
        if not isinstance(disk, dict):
            raise bad_request("AddVolumeOptions requires disk to not be nil")
        if not isinstance(source, dict) or len([s for s in SOURCES if s in source]) != 1 or len(source) != 1:  # fmt: skip
            raise bad_request("AddVolumeOptions requires exactly one persistentVolumeClaim or dataVolume source")  # fmt: skip
        if "cdrom" in disk:
            raise bad_request(f"hotplugged Disk {name} cannot have type cdrom")
        bus = (disk.get("disk") or disk.get("lun") or {}).get("bus")
        if bus != "scsi":
            raise bad_request(f"hotplugged Disk {name} does not use a scsi bus")
        options = copy.deepcopy(options)
        options["disk"]["name"] = name
        for value in options["volumeSource"].values():
            value["hotpluggable"] = True

        def request(obj: JsonObj) -> None:
            taken = {v["name"] for v in obj["spec"]["template"]["spec"].get("volumes", []) or []}
            pending = obj.get("status", {}).get("volumeRequests", []) or []
            taken |= {(r.get("addVolumeOptions") or {}).get("name") for r in pending}
            if name in taken:
                raise k.ConflictError(409, "Conflict", f"Unable to add volume [{name}] because volume with that name already exists")  # fmt: skip
            obj.setdefault("status", {})["volumeRequests"] = [*pending, {"addVolumeOptions": options}]  # fmt: skip

        self.client.update(k.VMS, vm, request, namespace, sub="status")

    def remove(self, namespace: str, vm: str, name: str) -> None:
        self._gate("Remove")

        def request(obj: JsonObj) -> None:
            volumes = obj["spec"]["template"]["spec"].get("volumes", []) or []
            found = [v for v in volumes if v["name"] == name]
            if not found:
                raise k.ConflictError(409, "Conflict", f"Unable to remove volume [{name}] because it does not exist")  # fmt: skip
            if not _hotpluggable(found[0]):
                raise bad_request(f"Unable to remove volume [{name}] because it is not hotpluggable")  # fmt: skip
            pending = obj.get("status", {}).get("volumeRequests", []) or []
            obj.setdefault("status", {})["volumeRequests"] = [*pending, {"removeVolumeOptions": {"name": name}}]  # fmt: skip

        self.client.update(k.VMS, vm, request, namespace, sub="status")


def apply_requests(client: KubeClient, vm: JsonObj) -> None:
    """virt-controller: the VM's queued volume requests into its template, then the running
    VMI's hot-plugged volumes made equal to the template's."""
    ns, name = vm["metadata"]["namespace"], vm["metadata"]["name"]
    taken: list[JsonObj] = []

    def take(obj: JsonObj) -> bool | None:
        taken[:] = obj.get("status", {}).get("volumeRequests", []) or []
        if not taken:
            return False
        obj["status"].pop("volumeRequests")
        return None

    if vm.get("status", {}).get("volumeRequests"):

        def edit(obj: JsonObj) -> None:
            for request in taken:
                _apply(obj["spec"]["template"]["spec"], request)

        client.update(k.VMS, name, take, ns, sub="status")
        if taken:
            client.update(k.VMS, name, edit, ns)
    current = client.get_or_none(k.VMS, name, ns)
    vmi = client.get_or_none(k.VMIS, name, ns)
    if current is None or vmi is None or vmi["metadata"].get("deletionTimestamp"):
        return
    template = current["spec"]["template"]["spec"]
    if _hotplugged(template) != _hotplugged(vmi["spec"]):

        def sync(obj: JsonObj) -> None:
            spec = obj["spec"]
            keep = [v for v in spec.get("volumes", []) or [] if not _hotpluggable(v)]
            plugged = _hotplugged(template)
            spec["volumes"] = keep + [copy.deepcopy(v) for v in plugged]
            disks = spec["domain"]["devices"].get("disks", []) or []
            names = {v["name"] for v in keep}
            wanted = {v["name"] for v in plugged}
            template_disks = template["domain"]["devices"].get("disks", []) or []
            spec["domain"]["devices"]["disks"] = [d for d in disks if d["name"] in names] + [
                copy.deepcopy(d) for d in template_disks if d["name"] in wanted
            ]

        client.update(k.VMIS, name, sync, ns)


def _hotplugged(spec: JsonObj) -> list[JsonObj]:
    return [v for v in spec.get("volumes", []) or [] if _hotpluggable(v)]


def _apply(template: JsonObj, request: JsonObj) -> None:
    devices = template.setdefault("domain", {}).setdefault("devices", {})
    if "addVolumeOptions" in request:
        options = request["addVolumeOptions"]
        template.setdefault("volumes", []).append({"name": options["name"], **options["volumeSource"]})  # fmt: skip
        devices.setdefault("disks", []).append(options["disk"])
    else:
        gone = request["removeVolumeOptions"]["name"]
        template["volumes"] = [v for v in template.get("volumes", []) if v["name"] != gone]
        devices["disks"] = [d for d in devices.get("disks", []) if d["name"] != gone]


def _claim_ready(client: KubeClient, ns: str, volume: JsonObj) -> bool:
    if "dataVolume" in volume:
        dv = client.get_or_none(k.DATA_VOLUMES, volume["dataVolume"]["name"], ns)
        return dv is not None and dv.get("status", {}).get("phase") == "Succeeded"
    claim = volume["persistentVolumeClaim"]["claimName"]
    pvc = client.get_or_none(k.PVCS, claim, ns)
    if pvc is not None:
        # A static claim (no StorageClass) waits for its PV (sim_binding); one of a class
        # counts as provisioned (no provisioner runs here).
        static = pvc["spec"].get("storageClassName") == ""
        return not static or pvc.get("status", {}).get("phase") == "Bound"
    # CDI's DataVolume makes the PVC of its name: succeeded, the claim is there.
    dv = client.get_or_none(k.DATA_VOLUMES, claim, ns)
    return dv is not None and dv.get("status", {}).get("phase") == "Succeeded"


def _attachment_pod(client: KubeClient, vmi: JsonObj, volume: str) -> JsonObj:
    meta = vmi["metadata"]
    node = vmi.get("status", {}).get("nodeName", "")
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": k.HOSTNAME_LABEL, "operator": "In", "values": [node]}]}]}}}  # fmt: skip
    body = {
        "metadata": {"name": f"hp-volume-{secrets.token_hex(3)}", "namespace": meta["namespace"],
                     "labels": {POD_LABEL: POD_VALUE, VMI_LABEL: meta["name"]},
                     "annotations": {"sim.openkeel/volume": volume}},
        "spec": {"automountServiceAccountToken": False, "affinity": affinity,
                 "containers": [{"name": "hotplug-disk", "image": "virt-launcher",
                                 "command": ["/bin/sh", "-c", "sleep infinity"]}]},
    }  # fmt: skip
    return client.create(k.PODS, body)


def delete_pods(client: KubeClient, ns: str, vmi: str, volume: str | None = None) -> None:
    for pod in client.items(k.PODS, ns, f"{POD_LABEL}={POD_VALUE},{VMI_LABEL}={vmi}"):
        if volume is None or pod["metadata"].get("annotations", {}).get("sim.openkeel/volume") == volume:  # fmt: skip
            client.delete(k.PODS, pod["metadata"]["name"], ns)


def step(client: KubeClient, vmi: JsonObj) -> None:
    """virt-controller + virt-handler: one phase further for one volume of a running VMI."""
    if vmi.get("status", {}).get("phase") != "Running":
        return
    meta = vmi["metadata"]
    ns, name = meta["namespace"], meta["name"]
    plugged = {v["name"]: v for v in _hotplugged(vmi["spec"])}
    statuses = vmi.get("status", {}).get("volumeStatus", []) or []
    known = {s["name"]: s for s in statuses}
    for volume_name, volume in plugged.items():
        entry = known.get(volume_name)
        phase = entry.get("phase") if entry else None
        if phase == "Ready":
            continue
        if entry is None:
            new: JsonObj = {"name": volume_name, "target": _target(plugged, volume_name), "phase": "Pending", "reason": "VolumePending",
                            "message": "hotplug volume waiting for its claim", "hotplugVolume": {}}  # fmt: skip
            _write(client, ns, name, volume_name, new)
            return
        if phase == "Pending":
            if not _claim_ready(client, ns, volume):
                continue
            pod = _attachment_pod(client, vmi, volume_name)
            attached = {"name": volume_name, "target": _target(plugged, volume_name), "phase": "AttachedToNode", "reason": "SuccessfulCreate",
                        "message": f"Created hotplug attachment pod {pod['metadata']['name']}",
                        "hotplugVolume": {"attachPodName": pod["metadata"]["name"],
                                          "attachPodUID": pod["metadata"]["uid"]}}  # fmt: skip
            _write(client, ns, name, volume_name, attached)
            return
        following = PHASES[PHASES.index(phase) + 1] if phase in PHASES else "Ready"
        moved = {**entry, "phase": following, "reason": "VolumeReady" if following == "Ready" else "SuccessfulMount"}  # fmt: skip
        if following == "Ready":
            moved["message"] = f"Successfully attach hotplugged volume {volume_name} to VM"
        _write(client, ns, name, volume_name, moved)
        return
    for volume_name, entry in known.items():
        if volume_name in plugged or "hotplugVolume" not in entry:
            continue
        if entry.get("phase") != DETACHING:
            _write(client, ns, name, volume_name, {**entry, "phase": DETACHING, "reason": "VolumeDetaching", "message": "Detaching the volume"})  # fmt: skip
        else:
            delete_pods(client, ns, name, volume_name)
            _write(client, ns, name, volume_name, None)
        return


def _target(plugged: dict[str, JsonObj], volume: str) -> str:
    """The guest's scsi device. KubeVirt leaves it empty until the disk is there; this API
    server's CRD validation takes an empty string for null (the field is required), so the
    stand-in names it from the start (the driver reads it only once Ready)."""
    return f"sd{chr(ord('a') + list(plugged).index(volume))}"


def _write(client: KubeClient, ns: str, vmi: str, volume: str, entry: JsonObj | None) -> None:
    def edit(obj: JsonObj) -> None:
        status = obj.setdefault("status", {})
        rest = [s for s in status.get("volumeStatus", []) or [] if s["name"] != volume]
        status["volumeStatus"] = rest if entry is None else [*rest, entry]

    client.update(k.VMIS, vmi, edit, ns)
