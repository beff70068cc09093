"""A test-side stand-in for KubeVirt's controllers and virt-api, over a real kube-apiserver.

A bare API server stores and validates KubeVirt objects but nothing reconciles them, and it has
no garbage collector. :class:`Simulator` watches VMs, VMIs, migrations and snapshots (only in
namespaces starting with its prefix, so concurrent test sessions do not fight) and does what
virt-controller/virt-handler would: VMIs from VM start/stop requests, VMI phases one step per
event, migrations (moving ``status.nodeName``), snapshots, owner-reference cascades and the
removal of the ``foregroundDeletion`` finalizer. :class:`StandInVirtApi` implements the driver's
VirtApi with virt-api's documented rules (v1.9 lifecycle.go).

Documented KubeVirt semantics it keeps, including those that make the driver's job harder:

- a migration's target node must satisfy the VMI's own ``nodeSelector`` merged with the
  migration's ``addedNodeSelector``, the VMI's values winning on key collisions ("can only
  restrict but not bypass", VirtualMachineInstanceMigration CRD); the target must be another
  Node that exists, is Ready and schedulable. Otherwise the target pod never schedules and
  the migration fails (KubeVirt fails it after its unschedulable-pod timeout; here at once);
- changes to a running VM's ``nodeSelector``/``affinity``/``tolerations`` reach its VMI only
  under the cluster's ``vmRolloutStrategy: LiveUpdate``; under ``Stage`` the VM gets the
  ``RestartRequired`` condition instead (:attr:`Simulator.rollout_strategy`);
- interfaces, their addresses and NIC hot-plug as sim_network describes (pod IPs change with
  every new pod; only bridge/SR-IOV interfaces on Multus networks are hot-plugged);
- volume hot-plug as sim_volumes describes (the HotplugVolumes feature gate, requests queued
  on the VM, scsi-only hot-plugged disks, volumeStatus phases and attachment pods);
- VirtualMachineExports and their HTTPS export server as sim_export describes;
- Kubernetes' PV controller (static binding, Released, the protection finalizers) as
  sim_binding describes.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable
from datetime import UTC, datetime

from openkeel.virt.kubevirt import client as k
from openkeel.virt.kubevirt.client import JsonObj, KubeClient
from openkeel.virt.kubevirt.watch import Watcher
from tests.virt.kubevirt import sim_binding, sim_export, sim_network, sim_volumes

VMI_PHASES = ["", "Pending", "Scheduling", "Scheduled", "Running"]
VMIM_PHASES = ["", "Pending", "Scheduling", "Scheduled", "PreparingTarget", "TargetReady", "Running"]  # fmt: skip
NODE_LABEL = "kubevirt.io/nodeName"
DEFAULT_NODE = "sim-node"
# VM template fields a LiveUpdate rollout carries to the running VMI (placement ones).
LIVE_UPDATABLE = ("nodeSelector", "affinity", "tolerations")


def conflict(message: str) -> k.ConflictError:
    return k.ConflictError(409, "Conflict", message)


def _owned_by(obj: JsonObj, uid: str) -> bool:
    return any(o.get("uid") == uid for o in obj["metadata"].get("ownerReferences", []) or [])


def _owner(vm: JsonObj) -> JsonObj:
    meta = vm["metadata"]
    return {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "name": meta["name"],
            "uid": meta["uid"], "controller": True, "blockOwnerDeletion": True}  # fmt: skip


class StandInVirtApi:
    """virt-api subresources as VM/VMI object edits (what virt-api + virt-handler do)."""

    def __init__(self, client: KubeClient) -> None:
        self.client = client
        self.calls: list[tuple[str, str]] = []
        self.console: dict[str, str] = {}
        self.hotplug = sim_volumes.Hotplug(client)

    def _vmi(self, ns: str, name: str) -> JsonObj | None:
        vmi = self.client.get_or_none(k.VMIS, name, ns)
        return None if vmi is None or vmi["metadata"].get("deletionTimestamp") else vmi

    def _request(self, ns: str, vm: str, request: JsonObj) -> None:
        def add(obj: JsonObj) -> None:
            status = obj.setdefault("status", {})
            status["stateChangeRequests"] = [*status.get("stateChangeRequests", []), request]

        self.client.update(k.VMS, vm, add, ns, sub="status")

    def start(self, namespace: str, vm: str) -> None:
        self.calls.append(("start", vm))
        obj = self.client.get(k.VMS, vm, namespace)
        strategy = obj["spec"].get("runStrategy", "Halted")
        if strategy in ("Always", "Once"):
            raise conflict(f"{strategy} does not support manual start requests")
        if strategy == "Halted":
            self.client.patch(k.VMS, vm, {"spec": {"runStrategy": "Always"}}, namespace)
            return
        if self._vmi(namespace, vm) is not None:
            raise conflict("VM is already running")
        self._request(namespace, vm, {"action": "Start"})

    def stop(self, namespace: str, vm: str, grace_period: int | None = None) -> None:
        self.calls.append(("stop", vm))
        obj = self.client.get(k.VMS, vm, namespace)
        strategy = obj["spec"].get("runStrategy", "Halted")
        if strategy in ("Always", "Once"):
            self.client.patch(k.VMS, vm, {"spec": {"runStrategy": "Halted"}}, namespace)
            return
        vmi = self._vmi(namespace, vm)
        if strategy == "Halted" or vmi is None:
            raise conflict("VM is not running")
        self._request(namespace, vm, {"action": "Stop", "uid": vmi["metadata"]["uid"]})

    def _set_paused(self, namespace: str, name: str, paused: bool) -> None:
        vmi = self._vmi(namespace, name)
        if vmi is None or vmi.get("status", {}).get("phase") != "Running":
            raise conflict("VMI is not running")

        def edit(obj: JsonObj) -> None:
            conds = [c for c in obj["status"].get("conditions", []) if c["type"] != "Paused"]
            if paused:
                conds.append({"type": "Paused", "status": "True", "reason": "PausedByUser"})
            obj["status"]["conditions"] = conds

        is_paused = any(c["type"] == "Paused" for c in vmi["status"].get("conditions", []))
        if is_paused == paused:
            raise conflict("VMI is already paused" if paused else "VMI is not paused")
        self.client.update(k.VMIS, name, edit, namespace)

    def pause(self, namespace: str, vmi: str) -> None:
        self.calls.append(("pause", vmi))
        self._set_paused(namespace, vmi, True)

    def unpause(self, namespace: str, vmi: str) -> None:
        self.calls.append(("unpause", vmi))
        self._set_paused(namespace, vmi, False)

    def soft_reboot(self, namespace: str, vmi: str) -> None:
        self.calls.append(("softreboot", vmi))
        if self._vmi(namespace, vmi) is None:
            raise conflict("VMI is not running")

    def reset(self, namespace: str, vmi: str) -> None:
        self.calls.append(("reset", vmi))
        if self._vmi(namespace, vmi) is None:
            raise conflict("VMI is not running")

    def add_volume(self, namespace: str, vm: str, options: JsonObj) -> None:
        self.calls.append(("addvolume", vm))
        self.hotplug.add(namespace, vm, options)

    def remove_volume(self, namespace: str, vm: str, volume: str) -> None:
        self.calls.append(("removevolume", vm))
        self.hotplug.remove(namespace, vm, volume)

    def console_log(self, namespace: str, vmi: str) -> str:
        return self.console.get(vmi, f"[    0.000000] Linux version 6.1 ({vmi})\n")


class Simulator:
    """virt-controller + virt-handler + CDI + the garbage collector, for one namespace prefix."""

    # The KubeVirt CR's spec.configuration.vmRolloutStrategy ("LiveUpdate" or "Stage").
    rollout_strategy = "LiveUpdate"
    # Nodes whose virt-launcher pods fail: a VMI scheduled there ends in phase Failed.
    failing_nodes: frozenset[str] = frozenset()

    def __init__(self, client: KubeClient, namespace_prefix: str) -> None:
        self.client = client
        self.prefix = namespace_prefix
        self.errors: list[str] = []
        self.addressing = sim_network.Addressing()
        self._lock = threading.Lock()
        self.exports = sim_export.ExportController(client)
        # False: PVC clones stay without a phase, as CDI's while it waits (a source in use);
        # the test then writes the phase CDI would (Succeeded, Failed).
        self.clones_proceed = True
        self.watchers = [
            Watcher(client, res, self._guard(handler), name=f"simulator-watch-{res.plural}")
            for res, handler in (
                (k.VMS, self.on_vm), (k.VMIS, self.on_vmi),
                (k.MIGRATIONS, self.on_migration), (k.VM_SNAPSHOTS, self.on_snapshot),
                (k.DATA_VOLUMES, self.on_data_volume),
                (k.VM_EXPORTS, self.exports.on_export), (k.PVCS, self.on_claim),
            )
        ]  # fmt: skip
        # PVs are cluster-scoped: the binder keeps those pre-bound to this prefix's claims.
        self.binder = sim_binding.Binder(client, namespace_prefix)
        self.watchers.append(Watcher(client, k.PVS, self._guard(self.binder.on_volume, scoped=False),
                                     name="simulator-watch-persistentvolumes"))  # fmt: skip

    def start(self) -> Simulator:
        self.exports.start()
        for watcher in self.watchers:
            watcher.start()
        for watcher in self.watchers:
            watcher.synced.wait(10)
        return self

    def threads(self) -> list[threading.Thread]:
        """The watch threads (for the leak check's owner declarations)."""
        return [*(w._thread for w in self.watchers), self.exports.thread]

    def stop(self) -> None:
        """Abort every watch and join its thread (before the client's owner closes it)."""
        for watcher in self.watchers:
            watcher.stop()
        self.exports.stop()

    def _guard(
        self, handler: Callable[[str, JsonObj], None], scoped: bool = True
    ) -> Callable[[str, JsonObj], None]:
        def run(kind: str, obj: JsonObj) -> None:
            if scoped and not obj.get("metadata", {}).get("namespace", "").startswith(self.prefix):
                return
            try:
                handler(kind, obj)
            except k.NotFoundError:
                pass  # deleted meanwhile: the next event says so
            except k.KubeError as exc:
                self.errors.append(f"{kind} {obj['metadata']['name']}: {exc}")

        return run

    # --- VirtualMachines -------------------------------------------------------------------

    def on_vm(self, kind: str, vm: JsonObj) -> None:
        meta = vm["metadata"]
        if kind == "DELETED":
            self._cascade(meta["namespace"], meta["uid"])
            return
        if meta.get("deletionTimestamp"):
            self._cascade(meta["namespace"], meta["uid"])
            if "foregroundDeletion" in (meta.get("finalizers") or []):
                self._drop_finalizer(vm)
            return
        current = self.client.get_or_none(k.VMS, meta["name"], meta["namespace"])
        if current is not None and not current["metadata"].get("deletionTimestamp"):
            self._ensure_data_volumes(current)
            self._apply_run_strategy(current)
            self._roll_out(current)
            sim_volumes.apply_requests(self.client, current)

    def _roll_out(self, vm: JsonObj) -> None:
        """Placement fields of the template vs. the running VMI: LiveUpdate copies them to
        the VMI, Stage marks the VM RestartRequired (cleared once they agree again)."""
        ns, name = vm["metadata"]["namespace"], vm["metadata"]["name"]
        vmi = self.client.get_or_none(k.VMIS, name, ns)
        if vmi is None or vmi["metadata"].get("deletionTimestamp"):
            return
        template = vm["spec"]["template"]["spec"]
        live = self.rollout_strategy == "LiveUpdate"
        plugged, nics_wait = sim_network.roll_out(template, vmi["spec"], live)
        if plugged is not None:

            def plug(obj: JsonObj) -> None:
                obj["spec"]["domain"]["devices"]["interfaces"] = plugged["domain"]["devices"]["interfaces"]  # fmt: skip
                obj["spec"]["networks"] = plugged["networks"]
                status = obj.setdefault("status", {})
                if status.get("phase") == "Running":
                    status["interfaces"] = sim_network.interface_status(obj["spec"], status.get("interfaces") or [], self.addressing, new_pod=False)  # fmt: skip

            self.client.update(k.VMIS, name, plug, ns)
            vmi = self.client.get(k.VMIS, name, ns)
        wanted = {f: template.get(f) for f in LIVE_UPDATABLE}
        differs = any(vmi["spec"].get(f) != v for f, v in wanted.items())
        if differs and live:

            def apply(obj: JsonObj) -> None:
                for field_name, value in wanted.items():
                    if value is None:
                        obj["spec"].pop(field_name, None)
                    else:
                        obj["spec"][field_name] = copy.deepcopy(value)

            self.client.update(k.VMIS, name, apply, ns)
            differs = False
        self._set_condition(ns, name, "RestartRequired", differs or nics_wait)

    def _set_condition(self, ns: str, name: str, kind: str, value: bool) -> None:
        def write(obj: JsonObj) -> bool | None:
            status = obj.setdefault("status", {})
            conds = [c for c in status.get("conditions", []) or [] if c.get("type") != kind]
            if value:
                conds.append({"type": kind, "status": "True", "reason": kind,
                              "message": "a non-live-updatable field was changed in the template spec"})  # fmt: skip
            if conds == (status.get("conditions") or []):
                return False
            status["conditions"] = conds
            return None

        self.client.update(k.VMS, name, write, ns, sub="status")

    def _cascade(self, ns: str, uid: str) -> None:
        for res in (k.VMIS, k.DATA_VOLUMES):
            for obj in self.client.items(res, ns):
                if _owned_by(obj, uid):
                    self.client.delete(res, obj["metadata"]["name"], ns)

    def _drop_finalizer(self, vm: JsonObj) -> None:
        def drop(obj: JsonObj) -> None:
            obj["metadata"]["finalizers"] = [
                f for f in obj["metadata"].get("finalizers", []) if f != "foregroundDeletion"
            ]

        self.client.update(k.VMS, vm["metadata"]["name"], drop, vm["metadata"]["namespace"])

    def _ensure_data_volumes(self, vm: JsonObj) -> None:
        ns = vm["metadata"]["namespace"]
        for template in vm["spec"].get("dataVolumeTemplates", []) or []:
            name = template["metadata"]["name"]
            if self.client.get_or_none(k.DATA_VOLUMES, name, ns) is not None:
                continue
            body = copy.deepcopy(template)
            body["metadata"] = {
                **body["metadata"],
                "namespace": ns,
                "ownerReferences": [_owner(vm)],
            }
            self.client.ensure(k.DATA_VOLUMES, body)
            status = {"status": {"phase": "Succeeded", "progress": "100.0%"}}
            self.client.patch(k.DATA_VOLUMES, name, status, ns, sub="status")

    def _apply_run_strategy(self, vm: JsonObj) -> None:
        meta, strategy = vm["metadata"], vm["spec"].get("runStrategy", "Halted")
        ns, name = meta["namespace"], meta["name"]
        vmi = self.client.get_or_none(k.VMIS, name, ns)
        requests = self._take_requests(ns, name)
        for request in requests:
            if request["action"] == "Stop" and vmi is not None:
                self.client.delete(k.VMIS, name, ns)
                vmi = None
            elif request["action"] == "Start" and vmi is None:
                vmi = self._create_vmi(vm)
        if strategy in ("Always", "RerunOnFailure") and vmi is None:
            vmi = self._create_vmi(vm)
        if strategy == "Halted" and vmi is not None:
            self.client.delete(k.VMIS, name, ns)
            vmi = None
        self._vm_status(ns, name, vmi)

    def _take_requests(self, ns: str, name: str) -> list[JsonObj]:
        """Remove the pending start/stop requests (conflict-checked) and return them."""
        taken: list[JsonObj] = []

        def take(obj: JsonObj) -> bool | None:
            taken[:] = obj.get("status", {}).get("stateChangeRequests", []) or []
            if not taken:
                return False
            obj["status"].pop("stateChangeRequests")
            return None

        self.client.update(k.VMS, name, take, ns, sub="status")
        return taken

    def _create_vmi(self, vm: JsonObj) -> JsonObj:
        meta, template = vm["metadata"], vm["spec"]["template"]
        body = {
            "metadata": {"name": meta["name"], "namespace": meta["namespace"],
                         "labels": dict(template.get("metadata", {}).get("labels", {})),
                         "ownerReferences": [_owner(vm)]},
            "spec": copy.deepcopy(template["spec"]),
        }  # fmt: skip
        return self.client.create(k.VMIS, body)

    def _vm_status(self, ns: str, name: str, vmi: JsonObj | None) -> None:
        phase = (vmi or {}).get("status", {}).get("phase", "")
        paused = any(c["type"] == "Paused" for c in (vmi or {}).get("status", {}).get("conditions", []))  # fmt: skip
        printable = "Stopped" if vmi is None else "Paused" if paused else "Running" if phase == "Running" else "Starting"  # fmt: skip
        status = {"printableStatus": printable, "ready": phase == "Running", "created": vmi is not None}  # fmt: skip

        def write(obj: JsonObj) -> bool | None:
            current = obj.setdefault("status", {})
            if all(current.get(key) == value for key, value in status.items()):
                return False
            current.update(status)
            return None

        if self.client.get_or_none(k.VMS, name, ns) is not None:
            self.client.update(k.VMS, name, write, ns, sub="status")

    # --- Nodes -------------------------------------------------------------------------------

    def lose_node(self, name: str) -> None:
        """A node stops answering: the node lifecycle controller sets Ready Unknown, and
        virt-controller, seeing virt-handler's heartbeat stale, marks the node unschedulable
        for guests and moves its VMIs to phase Failed (KubeVirt's node controller)."""
        unknown = {"conditions": [{"type": "Ready", "status": "Unknown", "reason": "NodeStatusUnknown"}]}  # fmt: skip
        self.client.patch(k.NODES, name, {"status": unknown}, sub="status")
        self.client.patch(k.NODES, name, {"metadata": {"labels": {"kubevirt.io/schedulable": "false"}}})  # fmt: skip
        for vmi in self.client.items(k.VMIS, None, f"{NODE_LABEL}={name}"):
            if not vmi["metadata"]["namespace"].startswith(self.prefix):
                continue

            def fail(obj: JsonObj) -> None:
                obj.setdefault("status", {})["phase"] = "Failed"
                obj["status"]["reason"] = "NodeUnresponsive"

            self.client.update(k.VMIS, vmi["metadata"]["name"], fail, vmi["metadata"]["namespace"])

    # --- VirtualMachineInstances -----------------------------------------------------------

    def on_vmi(self, kind: str, vmi: JsonObj) -> None:
        meta = vmi["metadata"]
        if kind == "DELETED" or meta.get("deletionTimestamp"):
            self._vm_status(meta["namespace"], meta["name"], None)
            sim_volumes.delete_pods(self.client, meta["namespace"], meta["name"])
            return
        phase = vmi.get("status", {}).get("phase", "")
        if phase in VMI_PHASES[:-1]:
            self._step_vmi(vmi, VMI_PHASES[VMI_PHASES.index(phase) + 1])
        else:
            self._vm_status(meta["namespace"], meta["name"], vmi)
            if phase == "Running":
                # hot-plugged volumes: started with the VM's template, or added since
                vm = self.client.get_or_none(k.VMS, meta["name"], meta["namespace"])
                if vm is not None:
                    sim_volumes.apply_requests(self.client, vm)
                sim_volumes.step(
                    self.client, self.client.get(k.VMIS, meta["name"], meta["namespace"])
                )

    def _step_vmi(self, vmi: JsonObj, phase: str) -> None:
        node = vmi["spec"].get("nodeSelector", {}).get(k.HOSTNAME_LABEL, DEFAULT_NODE)

        def step(obj: JsonObj) -> bool | None:
            status = obj.setdefault("status", {})
            if status.get("phase", "") != vmi.get("status", {}).get("phase", ""):
                return False  # someone else moved it on
            status["phase"] = phase
            # As virt-controller does: when the VMI entered each phase.
            stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            status.setdefault("phaseTransitionTimestamps", []).append(
                {"phase": phase, "phaseTransitionTimestamp": stamp}
            )
            if phase == "Running" and status.get("nodeName") in self.failing_nodes:
                status["phase"] = "Failed"
                status["reason"] = "PodFailed"
            if phase == "Scheduled":
                status["nodeName"] = node
                obj["metadata"].setdefault("labels", {})[NODE_LABEL] = node
            if phase == "Running":
                status["conditions"] = [{"type": "Ready", "status": "True"}]
                status["interfaces"] = sim_network.interface_status(obj["spec"], [], self.addressing, new_pod=True)  # fmt: skip
            return None

        self.client.update(k.VMIS, vmi["metadata"]["name"], step, vmi["metadata"]["namespace"])

    # --- migrations and snapshots ----------------------------------------------------------

    def on_migration(self, kind: str, vmim: JsonObj) -> None:
        if kind == "DELETED" or vmim["metadata"].get("deletionTimestamp"):
            return
        meta = vmim["metadata"]
        current = self.client.get_or_none(k.MIGRATIONS, meta["name"], meta["namespace"])
        if current is None or current["metadata"].get("deletionTimestamp"):
            return
        phase = current.get("status", {}).get("phase", "")
        if phase not in VMIM_PHASES:
            return
        if phase != "Running":
            following = VMIM_PHASES[VMIM_PHASES.index(phase) + 1]
            self.client.patch(k.MIGRATIONS, meta["name"], {"status": {"phase": following}}, meta["namespace"], sub="status")  # fmt: skip
            return
        if self.client.get_or_none(k.MIGRATIONS, meta["name"], meta["namespace"]) is None:
            return  # aborted
        vmi = self.client.get_or_none(k.VMIS, vmim["spec"]["vmiName"], meta["namespace"])
        target = None if vmi is None else self._migration_target(vmi, vmim["spec"].get("addedNodeSelector") or {})  # fmt: skip
        if target is None:
            failed = {"status": {"phase": "Failed"}}
            self.client.patch(k.MIGRATIONS, meta["name"], failed, meta["namespace"], sub="status")
            return

        def move(obj: JsonObj) -> None:
            source = obj["status"].get("nodeName")
            obj["status"]["nodeName"] = target
            obj["status"]["migrationState"] = {"completed": True, "sourceNode": source, "targetNode": target}  # fmt: skip
            obj["metadata"]["labels"][NODE_LABEL] = target
            # The guest now runs in the target pod: the pod network's address is that pod's.
            previous = obj["status"].get("interfaces") or []
            obj["status"]["interfaces"] = sim_network.interface_status(obj["spec"], previous, self.addressing, new_pod=True)  # fmt: skip

        self.client.update(k.VMIS, vmim["spec"]["vmiName"], move, meta["namespace"])
        self.client.patch(k.MIGRATIONS, meta["name"], {"status": {"phase": "Succeeded"}}, meta["namespace"], sub="status")  # fmt: skip

    def _migration_target(self, vmi: JsonObj, added: dict[str, str]) -> str | None:
        """The node the target pod would schedule to, or None (it stays Pending)."""
        selector = {**added, **(vmi["spec"].get("nodeSelector") or {})}  # the VMI's win
        source = vmi.get("status", {}).get("nodeName")
        for node in sorted(self.client.items(k.NODES), key=lambda n: n["metadata"]["name"]):
            labels = node["metadata"].get("labels", {}) or {}
            conditions = {c.get("type"): c.get("status") for c in node.get("status", {}).get("conditions", []) or []}  # fmt: skip
            if (
                node["metadata"]["name"] != source
                and all(labels.get(key) == value for key, value in selector.items())
                and conditions.get("Ready") == "True"
                and not node.get("spec", {}).get("unschedulable")
            ):
                return str(node["metadata"]["name"])
        return None

    def on_data_volume(self, kind: str, dv: JsonObj) -> None:
        """CDI: a clone of a PVC (``spec.source.pvc``) Succeeded once its source exists (CDI
        waits for a missing source; so does this); a blank one at once; one from a DataSource
        (``spec.sourceRef``) once that DataSource exists. A DataVolume that succeeds lets
        hot-plugged volumes waiting for it go on (virt-controller watches claims)."""
        meta, spec = dv["metadata"], dv.get("spec", {})
        if kind == "DELETED" or dv.get("status", {}).get("phase"):
            if dv.get("status", {}).get("phase") == "Succeeded" and kind != "DELETED":
                for vmi in self.client.items(k.VMIS, meta["namespace"]):
                    sim_volumes.step(self.client, vmi)
            return
        source, ref = spec.get("source", {}), spec.get("sourceRef")
        if "pvc" in source:
            ready = self.clones_proceed and self.client.get_or_none(k.DATA_VOLUMES, source["pvc"]["name"], source["pvc"]["namespace"]) is not None  # fmt: skip
        elif "blank" in source:
            ready = True
        elif ref and ref.get("kind") == "DataSource" and not meta.get("ownerReferences"):
            ns = ref.get("namespace") or meta["namespace"]
            ready = self.client.get_or_none(k.DATA_SOURCES, ref["name"], ns) is not None
        else:
            return
        if not ready:
            return
        status = {"status": {"phase": "Succeeded", "progress": "100.0%"}}
        self.client.patch(k.DATA_VOLUMES, meta["name"], status, meta["namespace"], sub="status")

    def on_claim(self, kind: str, pvc: JsonObj) -> None:
        """The PV controller (sim_binding); a claim that binds lets hot-plugged volumes
        waiting for it go on (virt-controller watches claims)."""
        self.binder.on_claim(kind, pvc)
        if kind != "DELETED" and pvc.get("status", {}).get("phase") == "Bound":
            for vmi in self.client.items(k.VMIS, pvc["metadata"]["namespace"]):
                sim_volumes.step(self.client, vmi)

    def on_snapshot(self, kind: str, snap: JsonObj) -> None:
        meta = snap["metadata"]
        if kind == "DELETED" or snap.get("status", {}).get("readyToUse"):
            return
        status = {"phase": "Succeeded", "readyToUse": True,
                  "virtualMachineSnapshotContentName": f"vmsnapshot-content-{meta['uid']}"}  # fmt: skip
        self.client.patch(k.VM_SNAPSHOTS, meta["name"], {"status": status}, meta["namespace"], sub="status")  # fmt: skip
        for export in self.client.items(k.VM_EXPORTS, meta["namespace"]):  # exports waiting on it
            self.exports.on_export("MODIFIED", export)
