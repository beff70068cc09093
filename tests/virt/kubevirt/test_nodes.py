"""Kubernetes Nodes as hypervisors: what a Node that does not report everything offers."""

from __future__ import annotations

from openkeel.virt.kubevirt.client import JsonObj
from openkeel.virt.kubevirt.nodes import node_capacity


def _node(status: JsonObj) -> JsonObj:
    return {"metadata": {"name": "n1", "labels": {}}, "status": status}


def test_node_without_ephemeral_storage_offers_no_disk() -> None:
    found = node_capacity(_node({"allocatable": {"cpu": "4", "memory": "8Gi"}}))
    assert (found.vcpus, found.memory_mb, found.disk_gb) == (4, 8192, 0)


def test_a_quantity_missing_from_allocatable_is_read_from_capacity() -> None:
    status = {
        "allocatable": {"cpu": "3500m", "memory": "7Gi"},
        "capacity": {"cpu": "4", "memory": "8Gi", "ephemeral-storage": "100Gi"},
    }
    found = node_capacity(_node(status))
    assert (found.vcpus, found.memory_mb, found.disk_gb) == (3, 7168, 100)


def test_node_with_an_empty_status() -> None:
    found = node_capacity(_node({}))
    assert (found.vcpus, found.memory_mb, found.disk_gb) == (0, 0, 0)
