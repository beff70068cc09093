"""Kubernetes' PersistentVolume controller, for the simulator (a bare kube-apiserver has none).

What it keeps of the documented semantics (Kubernetes docs "Persistent Volumes": Binding,
Reserving a PersistentVolume, Storage Object in Use Protection, Retain):

- a claim binds to the PV its ``spec.volumeName`` names, or to the PV whose ``claimRef``
  pre-binds it (namespace and name; a ``uid`` that is another claim's does not), and only
  when that PV satisfies it: capacity at least the request, every requested access mode,
  the same ``volumeMode`` (Filesystem when absent) and the same ``storageClassName``; a PV
  bound to another claim is not taken. Bound: the PV's ``claimRef`` gets the claim's uid
  and the PV's phase is ``Bound``; the claim gets ``volumeName``, the
  ``pv.kubernetes.io/bind-completed`` annotation and status ``Bound`` with the PV's
  capacity and access modes. Otherwise the claim stays ``Pending``;
- claims of a StorageClass (dynamic provisioning) are left alone: no provisioner runs here;
  PVs without a ``claimRef`` are not matched to claims without ``volumeName`` (the driver
  never makes one);
- a deleted claim's PV (``Retain``) becomes ``Released``, its ``claimRef`` kept;
- the ``kubernetes.io/pvc-protection`` finalizer (the API server's admission adds it) leaves
  a deleted claim once no pod of its namespace mounts it; ``kubernetes.io/pv-protection``
  leaves a deleted PV once it is not ``Bound``.

Only claims in the simulator's namespaces (``prefix``) and PVs pre-bound to them are handled.
"""

from __future__ import annotations

import re

from openkeel.virt.kubevirt import client as k
from openkeel.virt.kubevirt.client import JsonObj, KubeClient

PVC_PROTECTION = "kubernetes.io/pvc-protection"
PV_PROTECTION = "kubernetes.io/pv-protection"
BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
_UNITS = {"": 1, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40,
          "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}  # fmt: skip


def quantity(raw: str) -> int:
    found = re.fullmatch(r"(\d+)([KMGT]i?|k)?", str(raw))
    if found is None:
        raise ValueError(f"quantity {raw!r}")
    return int(found.group(1)) * _UNITS[found.group(2) or ""]


def satisfies(pv: JsonObj, pvc: JsonObj) -> bool:
    """The PV controller's match of a PV to a claim (size, modes, volumeMode, class)."""
    spec, wants = pv.get("spec", {}), pvc.get("spec", {})
    request = wants.get("resources", {}).get("requests", {}).get("storage", "0")
    return (
        quantity(spec.get("capacity", {}).get("storage", "0")) >= quantity(request)
        and set(wants.get("accessModes", [])) <= set(spec.get("accessModes", []))
        and spec.get("volumeMode", "Filesystem") == wants.get("volumeMode", "Filesystem")
        and (spec.get("storageClassName") or "") == (wants.get("storageClassName") or "")
    )


def _refers_to(pv: JsonObj, pvc: JsonObj) -> bool:
    ref, meta = pv.get("spec", {}).get("claimRef") or {}, pvc["metadata"]
    return (
        ref.get("namespace") == meta["namespace"]
        and ref.get("name") == meta["name"]
        and ref.get("uid") in (None, "", meta["uid"])
    )


class Binder:
    """The PV controller's binding and the storage-object-in-use protection."""

    def __init__(self, client: KubeClient, prefix: str) -> None:
        self.client = client
        self.prefix = prefix
        self.bound: list[tuple[str, str]] = []  # (namespace, claim) as they bind, for tests

    def on_claim(self, kind: str, pvc: JsonObj) -> None:
        meta = pvc["metadata"]
        if kind == "DELETED":
            self._release(pvc)
            return
        if meta.get("deletionTimestamp"):
            self._unprotect_claim(pvc)
            return
        if pvc.get("status", {}).get("phase") == "Bound" or pvc["spec"].get("storageClassName"):
            return
        pv = self._volume_for(pvc)
        if pv is None or not satisfies(pv, pvc):
            return  # Pending, as the API server made it
        self._bind(pv, pvc)

    def on_volume(self, kind: str, pv: JsonObj) -> None:
        ref = pv.get("spec", {}).get("claimRef") or {}
        if not str(ref.get("namespace", "")).startswith(self.prefix):
            return
        if kind == "DELETED":
            return
        if pv["metadata"].get("deletionTimestamp"):
            if pv.get("status", {}).get("phase") != "Bound":
                self._drop_finalizer(k.PVS, pv["metadata"]["name"], None, PV_PROTECTION)
            return
        pvc = self.client.get_or_none(k.PVCS, ref["name"], ref["namespace"])
        if pvc is not None:
            self.on_claim("MODIFIED", pvc)

    def _volume_for(self, pvc: JsonObj) -> JsonObj | None:
        named = pvc["spec"].get("volumeName")
        if named:
            pv = self.client.get_or_none(k.PVS, named)
            ref = (pv or {}).get("spec", {}).get("claimRef")
            return pv if pv is not None and (not ref or _refers_to(pv, pvc)) else None
        for pv in self.client.items(k.PVS):
            if _refers_to(pv, pvc) and pv.get("status", {}).get("phase") != "Released":
                return pv
        return None

    def _bind(self, pv: JsonObj, pvc: JsonObj) -> None:
        meta = pvc["metadata"]

        def claim_ref(obj: JsonObj) -> None:
            obj["spec"]["claimRef"] = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                                       "namespace": meta["namespace"], "name": meta["name"],
                                       "uid": meta["uid"]}  # fmt: skip

        name = pv["metadata"]["name"]
        self.client.update(k.PVS, name, claim_ref)
        self.client.patch(k.PVS, name, {"status": {"phase": "Bound"}}, sub="status")

        def volume_name(obj: JsonObj) -> None:
            obj["spec"]["volumeName"] = name
            obj["metadata"].setdefault("annotations", {})[BIND_COMPLETED] = "yes"

        self.client.update(k.PVCS, meta["name"], volume_name, meta["namespace"])
        status = {"phase": "Bound", "accessModes": pv["spec"]["accessModes"],
                  "capacity": pv["spec"]["capacity"]}  # fmt: skip
        self.client.patch(k.PVCS, meta["name"], {"status": status}, meta["namespace"], sub="status")
        self.bound.append((meta["namespace"], meta["name"]))

    def _release(self, pvc: JsonObj) -> None:
        name = pvc["spec"].get("volumeName")
        pv = self.client.get_or_none(k.PVS, name) if name else None
        if pv is None or not _refers_to(pv, pvc):
            return
        self.client.patch(k.PVS, name, {"status": {"phase": "Released"}}, sub="status")
        if pv["metadata"].get("deletionTimestamp"):
            self._drop_finalizer(k.PVS, name, None, PV_PROTECTION)

    def _unprotect_claim(self, pvc: JsonObj) -> None:
        meta = pvc["metadata"]
        for pod in self.client.items(k.PODS, meta["namespace"]):
            for volume in pod.get("spec", {}).get("volumes", []) or []:
                if (volume.get("persistentVolumeClaim") or {}).get("claimName") == meta["name"]:
                    return  # in use: the claim stays until the pod goes
        self._drop_finalizer(k.PVCS, meta["name"], meta["namespace"], PVC_PROTECTION)

    def _drop_finalizer(self, res: k.Resource, name: str, ns: str | None, finalizer: str) -> None:
        def drop(obj: JsonObj) -> bool | None:
            finalizers = obj["metadata"].get("finalizers") or []
            if finalizer not in finalizers:
                return False
            obj["metadata"]["finalizers"] = [f for f in finalizers if f != finalizer]
            return None

        try:
            self.client.update(res, name, drop, ns)
        except k.NotFoundError:
            return
