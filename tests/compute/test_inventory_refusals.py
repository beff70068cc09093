"""Nodes whose inventory Placement cannot take never stop the compute service.

A resource class with a total of 0 (a Kubernetes Node without ``ephemeral-storage``) is left
out, as Nova's drivers leave it out; an inventory Placement refuses for one node (here: more
memory reserved than the node has) is logged and retried by the next resource audit, while the
other nodes of the host get theirs.
"""

from __future__ import annotations

import dataclasses
import logging
import uuid as uuidlib

import pytest

from openkeel.compute.service import ComputeService
from openkeel.virt.fake import FakeDriver
from openkeel.virt.fake_config import FakeDriverConfig
from openkeel.virt.model import HostResources
from tests.compute.cloud import Cloud
from tests.conftest import CELL1_UUID


class SizedNodes(FakeDriver):
    """The fake driver with per-node sizes (``sizes[node]`` overrides the HostResources)."""

    def __init__(self, nodes: tuple[str, ...]) -> None:
        super().__init__(FakeDriverConfig(nodes=nodes), sleep=lambda s: None)
        self.sizes: dict[str, dict[str, int]] = {}

    def get_available_resource(self, nodename: str) -> HostResources:
        found = super().get_available_resource(nodename)
        return dataclasses.replace(found, **self.sizes.get(nodename, {}))


def _compute(cloud: Cloud, driver: SizedNodes, **overrides: object) -> ComputeService:
    for key, value in overrides.items():
        cloud.services.conf.set_override(key, value)
    service = ComputeService(
        cloud.services.conf,
        driver,
        cloud.transport,
        cloud.placement,
        cloud.services.api_db,
        cloud.services.cell_dbs[CELL1_UUID],
        clock=cloud.clock,
        cell_uuid=CELL1_UUID,
        host=f"host-{uuidlib.uuid4().hex[:8]}",
    )
    cloud.computes.append(service)
    return service


def _provider(compute: ComputeService, nodename: str) -> str:
    node = compute.host.tracker.node_for(nodename)
    assert node is not None
    return node.uuid


def test_node_without_disk_has_no_disk_inventory(cloud: Cloud) -> None:
    driver = SizedNodes(("diskless", "full"))
    driver.sizes["diskless"] = {"local_gb": 0}
    compute = _compute(cloud, driver, reserved_host_memory_mb=512)
    compute.start(background=False)
    diskless = cloud.placement.get_inventories(_provider(compute, "diskless"))
    assert set(diskless) == {"VCPU", "MEMORY_MB"}
    full = cloud.placement.get_inventories(_provider(compute, "full"))
    assert set(full) == {"VCPU", "MEMORY_MB", "DISK_GB"}


def test_refused_inventory_is_logged_and_retried(
    cloud: Cloud, caplog: pytest.LogCaptureFixture
) -> None:
    driver = SizedNodes(("small", "big"))
    driver.sizes["small"] = {"memory_mb": 512}  # less than the 1024 MB reserved: refused
    compute = _compute(cloud, driver, reserved_host_memory_mb=1024)
    with caplog.at_level(logging.ERROR, logger="openkeel.compute.resource_tracker"):
        compute.start(background=False)
    assert "Error updating resources for node small" in caplog.text
    big = cloud.placement.get_inventories(_provider(compute, "big"))
    assert big["MEMORY_MB"].total == 800000
    assert "MEMORY_MB" not in cloud.placement.get_inventories(_provider(compute, "small"))
    assert compute.service_id is not None  # the service runs

    driver.sizes["small"] = {"memory_mb": 4096}
    cloud.clock.advance(60)
    assert "update_available_resource" in compute.periodic.run_due()
    small = cloud.placement.get_inventories(_provider(compute, "small"))
    assert small["MEMORY_MB"].total == 4096


def test_inventory_dropping_to_zero_is_removed(cloud: Cloud) -> None:
    driver = SizedNodes(("node",))
    compute = _compute(cloud, driver, reserved_host_memory_mb=0)
    compute.start(background=False)
    assert "DISK_GB" in cloud.placement.get_inventories(_provider(compute, "node"))
    driver.sizes["node"] = {"local_gb": 0}
    compute.update_available_resource()
    assert set(cloud.placement.get_inventories(_provider(compute, "node"))) == {
        "VCPU",
        "MEMORY_MB",
    }


class Released(SizedNodes):
    """Counts cleanup_host; its node listing fails when ``broken`` (a cluster gone away)."""

    def __init__(self) -> None:
        super().__init__(("released",))
        self.cleanups = 0
        self.broken = False

    def get_available_nodes(self, refresh: bool = False) -> list[str]:
        if self.broken:
            raise ConnectionError("the cluster went away during start-up")
        return super().get_available_nodes(refresh)

    def cleanup_host(self, host: str) -> None:
        self.cleanups += 1


def test_a_failed_start_and_a_crash_stop_release_the_driver(cloud: Cloud) -> None:
    """What init_host opened (a KubeVirt watch thread, its connections) is released when the
    start fails after it, and when the service stops without draining (a crash)."""
    failing = Released()
    failing.broken = True
    with pytest.raises(ConnectionError):
        _compute(cloud, failing).start(background=False)
    assert failing.cleanups == 1
    crashed = Released()
    service = _compute(cloud, crashed)
    service.start(background=False)
    service.stop(drain=False)
    assert crashed.cleanups == 1
