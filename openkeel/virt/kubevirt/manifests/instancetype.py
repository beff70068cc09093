"""Flavors as VirtualMachineClusterInstancetypes (when ``[kubevirt] use_instancetypes``).

``cluster_instancetype`` builds the object a flavor sync would apply; ``split_domain`` moves the
fields an instancetype owns out of a VM's domain (KubeVirt rejects VMs that set them twice) and
refuses image properties that would need a different instancetype than the flavor's.
"""

from __future__ import annotations

import copy

from openkeel.virt.kubevirt.manifests import naming
from openkeel.virt.kubevirt.manifests.extra_specs import (
    DomainSettings,
    Treatment,
    UnsupportedFeature,
)
from openkeel.virt.kubevirt.manifests.resolution import resolve
from openkeel.virt.kubevirt.manifests.settings import JsonObj, KubevirtSettings
from openkeel.virt.model import FlavorSpec

API_VERSION = "instancetype.kubevirt.io/v1beta1"
KIND = "VirtualMachineClusterInstancetype"

# (domain path, instancetype spec path) of the fields an instancetype owns.
_OWNED = (
    ("cpu.dedicatedCpuPlacement", "cpu.dedicatedCPUPlacement"),
    ("cpu.isolateEmulatorThread", "cpu.isolateEmulatorThread"),
    ("cpu.numa", "cpu.numa"),
    ("cpu.realtime", "cpu.realtime"),
    ("cpu.maxSockets", "cpu.maxSockets"),
    ("memory.hugepages", "memory.hugepages"),
    ("devices.gpus", "gpus"),
    ("devices.hostDevices", "hostDevices"),
    ("launchSecurity", "launchSecurity"),
)
_TOPOLOGY_KEYS = ("hw:cpu_sockets", "hw:cpu_cores", "hw:cpu_threads")


def instancetype_ref(flavor: FlavorSpec) -> JsonObj:
    """``vm.spec.instancetype``: KubeVirt pins the resolved spec in a ControllerRevision."""
    return {"kind": KIND, "name": naming.instancetype_name(flavor.flavor_id)}


def _get(tree: JsonObj, path: str) -> object:
    node: object = tree
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def _set(tree: JsonObj, path: str, value: object) -> None:
    *parents, leaf = path.split(".")
    for part in parents:
        tree = tree.setdefault(part, {})
    tree[leaf] = value


def _pop(tree: JsonObj, path: str) -> None:
    *parents, leaf = path.split(".")
    chain = [tree]
    for part in parents:
        chain.append(chain[-1][part])
    del chain[-1][leaf]
    for part, parent in zip(reversed(parents), reversed(chain[:-1]), strict=True):
        if not parent[part]:
            del parent[part]


def cluster_instancetype(flavor: FlavorSpec, settings: KubevirtSettings) -> JsonObj:
    """The VirtualMachineClusterInstancetype of a flavor (flavor extra specs only)."""
    domain = resolve(flavor, None, settings).domain
    spec: JsonObj = {"cpu": {"guest": flavor.vcpus}, "memory": {"guest": f"{flavor.memory_mb}Mi"}}
    for domain_path, spec_path in _OWNED:
        value = _get(domain, domain_path)
        if value is not None:
            _set(spec, spec_path, copy.deepcopy(value))
    labels = {
        naming.LABEL_MANAGED_BY: naming.MANAGED_BY,
        naming.LABEL_FLAVOR_ID: naming.label_value(flavor.flavor_id),
    }
    annotations = {
        naming.ANNOTATION_FLAVOR_ID: flavor.flavor_id,
        naming.ANNOTATION_FLAVOR_NAME: flavor.name,
    }
    metadata = {
        "name": naming.instancetype_name(flavor.flavor_id),
        "labels": labels,
        "annotations": annotations,
    }
    return {"apiVersion": API_VERSION, "kind": KIND, "metadata": metadata, "spec": spec}


def split_domain(
    resolved: DomainSettings, flavor: FlavorSpec, settings: KubevirtSettings
) -> JsonObj:
    """The VM's own domain fields when the flavor's instancetype supplies CPU and memory."""
    for key in _TOPOLOGY_KEYS:
        outcome = resolved.outcome(key) or resolved.outcome(key.replace("hw:", "hw_"))
        if outcome is not None and outcome.treatment == Treatment.APPLIED:
            raise UnsupportedFeature(
                outcome.key,
                outcome.value,
                outcome.source,
                "no explicit topology with instancetypes",
            )
    flavor_only = resolve(flavor, None, settings).domain
    domain = copy.deepcopy(resolved.domain)
    for domain_path, _ in _OWNED:
        if _get(domain, domain_path) != _get(flavor_only, domain_path):
            culprit = next(o for o in resolved.outcomes if o.source == "image")
            raise UnsupportedFeature(
                culprit.key, culprit.value, culprit.source, "it changes the flavor's instancetype"
            )
        if _get(domain, domain_path) is not None:
            _pop(domain, domain_path)
    for field in ("sockets", "cores", "threads"):
        _pop(domain, f"cpu.{field}")
    return domain
