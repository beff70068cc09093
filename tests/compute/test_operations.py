"""Compute operations over RPC and directly: build, delete, stop/start/reboot, failures."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from openkeel.compute.operations import delete, power
from openkeel.compute.operations.build import build_and_run
from openkeel.db.repositories import instance_mappings
from openkeel.db.schema import cell as cell_schema
from openkeel.domain.instances import InstanceNotFound, InstanceUpdate
from openkeel.rpc.clients.compute import ComputeRpcClient
from openkeel.rpc.message import CallContext
from openkeel.rpc.messages.compute import BuildAndRunInstance
from openkeel.virt.fake_config import FakeDriverConfig
from tests.compute.cloud import Cloud, wait_for
from tests.conftest import CELL1_UUID

CTX = CallContext(user_id="demo", project_id="demo", request_id="req-1")


def _events(cloud: Cloud, uuid: str) -> list[tuple[str, str | None]]:
    actions, events = cell_schema.instance_actions, cell_schema.instance_actions_events
    query = (
        sa.select(events.c.event, events.c.result)
        .join(actions, actions.c.id == events.c.action_id)
        .where(actions.c.instance_uuid == uuid)
        .order_by(events.c.id)
    )
    with cloud.services.cell_dbs[CELL1_UUID].connect() as conn:
        return [tuple(row) for row in conn.execute(query)]  # type: ignore[misc]


def test_build_over_rpc_goes_active_with_network_info(cloud: Cloud) -> None:
    compute = cloud.compute().start(background=False)
    instance = cloud.instance(compute)
    cloud.cell1.ensure_action(instance.uuid, "create", CTX.request_id, "demo", "demo")
    client = ComputeRpcClient(cloud.transport)
    client.cast(CTX, compute.hostname, BuildAndRunInstance(instance.uuid))
    wait_for(lambda: cloud.cell1.get(instance.uuid).vm_state == "active")
    built = cloud.cell1.get(instance.uuid)
    assert (built.task_state, built.power_state) == (None, 1)
    assert built.launched_at == cloud.clock.now()
    (vif,) = built.network_info
    assert vif["network"]["label"] == "private"
    assert vif["network"]["subnets"][0]["ips"][0]["address"] == "10.0.0.2"
    assert instance.uuid in compute.host.driver.list_instance_uuids()
    assert _events(cloud, instance.uuid) == [("compute__do_build_and_run_instance", "Success")]


def test_build_failure_without_retry_is_error_with_fault_and_no_allocation(cloud: Cloud) -> None:
    instance_uuid = "11111111-1111-4111-8111-111111111111"
    compute = cloud.compute(
        FakeDriverConfig(nodes=("n-fail",), fail_spawn_for=frozenset({instance_uuid}))
    )
    compute.start(background=False)
    instance = cloud.instance(compute, uuid=instance_uuid)
    build_and_run(compute.host, CTX, BuildAndRunInstance(instance.uuid))
    failed = cloud.cell1.get(instance.uuid)
    assert (failed.vm_state, failed.task_state) == ("error", None)
    assert failed.fault is not None
    assert failed.fault.code == 500
    assert failed.fault.message == f"Injected spawn failure for {instance_uuid}"
    assert failed.network_info == ()
    assert cloud.placement.get_allocations(instance.uuid).allocations == {}
    assert compute.host.driver.list_instance_uuids() == []


def test_build_of_instance_being_deleted_stops_quietly(cloud: Cloud) -> None:
    compute = cloud.compute().start(background=False)
    instance = cloud.instance(compute, task_state="deleting")
    build_and_run(compute.host, CTX, BuildAndRunInstance(instance.uuid))
    current = cloud.cell1.get(instance.uuid)
    assert (current.vm_state, current.task_state) == ("building", "deleting")
    assert compute.host.driver.list_instance_uuids() == []


def test_delete(cloud: Cloud) -> None:
    compute = cloud.compute().start(background=False)
    instance = cloud.instance(compute)
    build_and_run(compute.host, CTX, BuildAndRunInstance(instance.uuid))
    cloud.cell1.update(instance.uuid, InstanceUpdate(task_state="deleting"))
    delete.terminate(compute.host, CTX, instance.uuid)
    with pytest.raises(InstanceNotFound):
        cloud.cell1.get(instance.uuid)
    gone = cloud.cell1.get(instance.uuid, read_deleted="yes")
    assert (gone.vm_state, gone.task_state, gone.deleted) == ("deleted", None, True)
    assert gone.terminated_at == cloud.clock.now()
    assert cloud.placement.get_allocations(instance.uuid).allocations == {}
    assert compute.host.driver.list_instance_uuids() == []
    assert (
        compute.host.network.get_instance_nw_info(compute.host.net_ref(instance.uuid, "demo")) == []
    )
    with cloud.services.api_db.connect() as conn:
        assert instance_mappings.get(conn, instance.uuid).queued_for_delete is True


def test_stop_start_reboot(cloud: Cloud) -> None:
    compute = cloud.compute().start(background=False)
    instance = cloud.instance(compute)
    build_and_run(compute.host, CTX, BuildAndRunInstance(instance.uuid))
    cloud.cell1.update(instance.uuid, InstanceUpdate(task_state="powering-off"))
    power.stop(compute.host, CTX, instance.uuid)
    stopped = cloud.cell1.get(instance.uuid)
    assert (stopped.vm_state, stopped.task_state, stopped.power_state) == ("stopped", None, 4)
    cloud.cell1.update(instance.uuid, InstanceUpdate(task_state="powering-on"))
    power.start(compute.host, CTX, instance.uuid)
    started = cloud.cell1.get(instance.uuid)
    assert (started.vm_state, started.task_state, started.power_state) == ("active", None, 1)
    cloud.cell1.update(instance.uuid, InstanceUpdate(task_state="rebooting"))
    power.reboot(compute.host, CTX, instance.uuid, "SOFT")
    rebooted = cloud.cell1.get(instance.uuid)
    assert (rebooted.vm_state, rebooted.task_state, rebooted.power_state) == ("active", None, 1)


def test_stop_of_an_instance_being_deleted_leaves_the_delete_alone(
    cloud: Cloud, caplog: pytest.LogCaptureFixture
) -> None:
    """A delete took the instance over before the stop ran: no ERROR log with a traceback, no
    fault, and the delete's task state is not reverted under it."""
    compute = cloud.compute().start(background=False)
    instance = cloud.instance(compute)
    build_and_run(compute.host, CTX, BuildAndRunInstance(instance.uuid))
    cloud.cell1.update(instance.uuid, InstanceUpdate(task_state="deleting"))
    with caplog.at_level("INFO"):
        power.stop(compute.host, CTX, instance.uuid)
    current = cloud.cell1.get(instance.uuid)
    assert (current.vm_state, current.task_state, current.fault) == ("active", "deleting", None)
    assert [r.levelname for r in caplog.records if r.levelname in ("ERROR", "WARNING")] == []


def test_stop_failure_reverts_task_state_with_fault(cloud: Cloud) -> None:
    from openkeel.virt.fake_config import InjectedFailure

    config = FakeDriverConfig(nodes=("n-stop",), failures=(InjectedFailure("power_off"),))
    compute = cloud.compute(config).start(background=False)
    instance = cloud.instance(compute)
    build_and_run(compute.host, CTX, BuildAndRunInstance(instance.uuid))
    cloud.cell1.update(instance.uuid, InstanceUpdate(task_state="powering-off"))
    power.stop(compute.host, CTX, instance.uuid)
    current = cloud.cell1.get(instance.uuid)
    assert (current.vm_state, current.task_state) == ("active", None)
    assert current.fault is not None
    assert current.fault.message == f"Injected power_off failure for {instance.uuid}"


def test_late_build_cast_does_not_revive_a_settled_instance(cloud: Cloud) -> None:
    """A build queued while the instance was settled to ERROR (restart reconciliation, the
    conductor's orphan sweep) must leave it in ERROR with its fault, not build it."""
    compute = cloud.compute().start(background=False)
    instance = cloud.instance(compute)
    cloud.cell1.update(instance.uuid, InstanceUpdate(vm_state="error", task_state=None))
    build_and_run(compute.host, CTX, BuildAndRunInstance(instance.uuid))
    settled = cloud.cell1.get(instance.uuid)
    assert (settled.vm_state, settled.task_state) == ("error", None)
    assert instance.uuid not in compute.host.driver.list_instance_uuids()
