"""Kubernetes Nodes as hypervisors: what a Node that does not report everything offers."""

from __future__ import annotations

import pytest

from openkeel.virt.kubevirt import client as k
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


class _Refusing:
    """A client whose every read is refused (or unanswered) with ``status``."""

    def __init__(self, status: int) -> None:
        self.status = status

    def get_or_none(self, *_args: object) -> None:
        raise k.KubeError(self.status, "Forbidden" if self.status else "Unreachable", "no")


@pytest.mark.parametrize(("status", "up"), [(403, False), (401, False), (0, True), (503, True)])
def test_host_up_when_the_api_refuses_or_does_not_answer(status: int, up: bool) -> None:
    """Refused credentials: the host cannot manage its guests (down, logged); no answer: not
    known, so no flapping on a blip."""
    from openkeel.virt.kubevirt.driver import KubevirtDriver
    from openkeel.virt.kubevirt.manifests.settings import KubevirtSettings

    driver = KubevirtDriver(_Refusing(status), KubevirtSettings(), None, watch_events=False)  # type: ignore[arg-type]
    driver.host = "n1"
    assert driver.host_up() is up
