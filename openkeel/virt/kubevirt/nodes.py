"""Kubernetes Nodes as Nova hypervisors: allocatable resources, zones, quantities.

Used by the KubeVirt driver's host methods (get_available_resource, availability zones).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from openkeel.virt.kubevirt.client import NODES, JsonObj, KubeClient

ZONE_LABEL = "topology.kubernetes.io/zone"

# --- nodes as hypervisors ----------------------------------------------------------------

_SUFFIXES = {
    "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
    "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
}  # fmt: skip


def parse_quantity(value: str | int | float) -> Decimal:
    """A Kubernetes resource quantity ("4", "3500m", "16Gi", "1e3") as a number."""
    text = str(value).strip()
    for suffix in sorted(_SUFFIXES, key=len, reverse=True):
        if text.endswith(suffix):
            return Decimal(text[: -len(suffix)]) * _SUFFIXES[suffix]
    if text.endswith("m"):
        return Decimal(text[:-1]) / 1000
    return Decimal(text)


@dataclass(frozen=True)
class NodeCapacity:
    """What a Node offers to guests (from status.allocatable) and where it is."""

    name: str
    vcpus: int
    memory_mb: int
    disk_gb: int
    zone: str | None
    ready: bool
    schedulable: bool
    kernel_version: str
    # Nova's architecture name for the node's ``kubernetes.io/arch`` label.
    architecture: str = "x86_64"


_ARCHES = {"amd64": "x86_64", "arm64": "aarch64", "ppc64le": "ppc64le", "s390x": "s390x"}


def node_capacity(node: JsonObj) -> NodeCapacity:
    """What ``node`` offers. A quantity the Node does not report is 0 (a Node without
    ``ephemeral-storage`` offers no DISK_GB; the resource tracker leaves zero totals out)."""
    status = node.get("status", {})
    conditions = {c.get("type"): c.get("status") for c in status.get("conditions", [])}
    labels = node.get("metadata", {}).get("labels", {})
    return NodeCapacity(
        name=node["metadata"]["name"],
        vcpus=int(_quantity(status, "cpu")),
        memory_mb=int(_quantity(status, "memory") // 2**20),
        disk_gb=int(_quantity(status, "ephemeral-storage") // 2**30),
        zone=labels.get(ZONE_LABEL),
        ready=conditions.get("Ready", "True") == "True",
        schedulable=not node.get("spec", {}).get("unschedulable", False),
        kernel_version=status.get("nodeInfo", {}).get("kernelVersion", ""),
        architecture=_ARCHES.get(labels.get("kubernetes.io/arch", "amd64"), "x86_64"),
    )


def _quantity(status: JsonObj, name: str) -> Decimal:
    """``status.allocatable[name]``, else ``status.capacity[name]``, else 0."""
    for source in ("allocatable", "capacity"):
        value = (status.get(source) or {}).get(name)
        if value is not None:
            return parse_quantity(value)
    return Decimal(0)


def availability_zones(client: KubeClient) -> dict[str, str | None]:
    """Node name -> its ``topology.kubernetes.io/zone`` label (None when unlabelled)."""
    return {n.name: n.zone for n in map(node_capacity, client.items(NODES))}
