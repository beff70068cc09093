"""Kubernetes Nodes as Nova hypervisors: allocatable resources, zones, quantities.

Used by the KubeVirt driver's host methods (get_available_resource, availability zones).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal

from openkeel.virt.kubevirt.client import NODES, JsonObj, KubeClient
from openkeel.virt.kubevirt.watch import Watcher

LOG = logging.getLogger(__name__)

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


def node_names(client: KubeClient, selector: str = "") -> list[str]:
    """Names of the Nodes matching ``selector`` (every Node when empty), sorted."""
    return sorted(n["metadata"]["name"] for n in client.items(NODES, None, selector or None))


class NodeWatch:
    """The Nodes matching a label selector, followed as they come and go: ``on_join(name)``
    for a Node that appears (or starts matching), ``on_leave(name)`` for one deleted (or no
    longer matching: a label selector watch reports it DELETED). Callbacks run on the watch
    thread, one at a time; ``known`` names the Nodes present at start (no join for them)."""

    def __init__(
        self,
        client: KubeClient,
        selector: str,
        on_join: Callable[[str], None],
        on_leave: Callable[[str], None],
        known: set[str] | None = None,
    ) -> None:
        self._on_join, self._on_leave = on_join, on_leave
        self._present = set(known or ())
        self._lock = threading.Lock()
        self._watcher = Watcher(client, NODES, self._handle, label_selector=selector or None, name="watch-nodes")  # fmt: skip

    def start(self) -> NodeWatch:
        self._watcher.start()
        return self

    @property
    def synced(self) -> threading.Event:
        return self._watcher.synced

    def stop(self) -> None:
        self._watcher.stop()

    def threads(self) -> list[threading.Thread]:
        return [self._watcher._thread]

    def _handle(self, kind: str, node: JsonObj) -> None:
        name = str(node.get("metadata", {}).get("name", ""))
        with self._lock:
            if kind == "DELETED":
                if name not in self._present:
                    return
                self._present.discard(name)
                callback = self._on_leave
            else:
                if name in self._present:
                    return
                self._present.add(name)
                callback = self._on_join
        LOG.info("Node %s %s", name, "left" if kind == "DELETED" else "joined")
        callback(name)
