"""Compute service start: service record, heartbeat, host mapping, compute node, Placement."""

from __future__ import annotations

import threading
import time

from openkeel.db.repositories import compute_nodes, host_mappings, services
from openkeel.virt.fake_config import FakeDriverConfig
from tests.compute.cloud import Cloud
from tests.conftest import CELL1_UUID


def test_start_registers_service_mapping_node_and_provider(cloud: Cloud) -> None:
    compute = cloud.compute(reserved_host_memory_mb=1024, cpu_allocation_ratio=2.0)
    compute.start(background=False)
    with cloud.services.cell_dbs[CELL1_UUID].connect() as conn:
        record = services.get_by_host_and_binary(conn, compute.hostname, "nova-compute")
        assert record is not None
        assert (record.topic, record.version, record.report_count) == ("compute", 74, 0)
        (node,) = compute_nodes.nodes_of_host(conn, compute.hostname)
    assert node.hypervisor_hostname == f"{compute.hostname}-node"
    assert (node.vcpus, node.memory_mb, node.local_gb) == (1000, 800000, 600000)
    assert (node.vcpus_used, node.memory_mb_used, node.running_vms) == (0, 1024, 0)
    assert node.service_id == record.id
    with cloud.services.api_db.connect() as conn:
        assert host_mappings.get(conn, compute.hostname).cell_uuid == CELL1_UUID
    inventories = cloud.placement.get_inventories(str(node.uuid))
    assert inventories["VCPU"].total == 1000
    assert inventories["VCPU"].allocation_ratio == 2.0
    assert inventories["MEMORY_MB"].reserved == 1024
    assert inventories["DISK_GB"].allocation_ratio == 1.0
    assert cloud.placement.get_traits(str(node.uuid)) == FakeDriverConfig().traits
    assert cloud.placement.get_provider(str(node.uuid)).name == node.hypervisor_hostname


def test_heartbeat_every_report_interval(cloud: Cloud) -> None:
    compute = cloud.compute()
    compute.start(background=False)
    assert compute.heartbeats.run_due() == []
    cloud.clock.advance(10)
    assert compute.heartbeats.run_due() == ["heartbeat"]
    assert "heartbeat" not in compute.periodic.tasks
    cloud.clock.advance(10)
    compute.heartbeats.run_due()
    with cloud.services.cell_dbs[CELL1_UUID].connect() as conn:
        record = services.get_by_host_and_binary(conn, compute.hostname, "nova-compute")
    assert record is not None
    assert record.report_count == 2
    assert record.last_seen_up == cloud.clock.now()


def test_restart_reuses_records(cloud: Cloud) -> None:
    compute = cloud.compute()
    compute.start(background=False)
    first = compute.host.tracker.node_for(None)
    compute.stop()
    compute.start(background=False)
    assert compute.host.tracker.node_for(None) == first
    with cloud.services.cell_dbs[CELL1_UUID].connect() as conn:
        assert len(services.list_services(conn, host=compute.hostname)) == 1
        assert len(compute_nodes.nodes_of_host(conn, compute.hostname)) == 1


def test_resource_audit_counts_instances(cloud: Cloud) -> None:
    compute = cloud.compute(reserved_host_memory_mb=0)
    compute.start(background=False)
    cloud.instance(compute, vm_state="active", task_state=None)
    cloud.clock.advance(60)
    assert "update_available_resource" in compute.periodic.run_due()
    with cloud.services.cell_dbs[CELL1_UUID].connect() as conn:
        (node,) = compute_nodes.nodes_of_host(conn, compute.hostname)
    assert (node.vcpus_used, node.memory_mb_used, node.local_gb_used) == (1, 512, 1)
    assert node.running_vms == 1
    assert node.free_ram_mb == 800000 - 512


def _report_count(cloud: Cloud, hostname: str) -> int:
    with cloud.services.cell_dbs[CELL1_UUID].connect() as conn:
        record = services.get_by_host_and_binary(conn, hostname, "nova-compute")
    assert record is not None
    return record.report_count


def test_heartbeat_goes_on_while_a_periodic_task_hangs_and_without_periodic_tasks(
    cloud: Cloud,
) -> None:
    """Nova's report_state is a timer of its own: a periodic task that takes long (a resource
    audit against a slow cluster) does not make the host look down, nor does
    periodic_enable = False."""
    for periodic_enable in (True, False):
        compute = cloud.compute(periodic_enable=periodic_enable)
        release = threading.Event()
        compute.start()
        try:
            compute.periodic.add("slow", release.wait, 0, run_immediately=True)
            before = _report_count(cloud, compute.hostname)
            deadline = time.monotonic() + 20
            while _report_count(cloud, compute.hostname) <= before:
                assert time.monotonic() < deadline, "no heartbeat"
                cloud.clock.advance(10)  # the runners' threads tick every second
                time.sleep(0.2)
        finally:
            release.set()
            compute.stop()
