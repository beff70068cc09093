"""Conductor: schedule_and_build_instances (success, NoValidHost → cell0, build request deleted
during scheduling) and build_instances reschedules (alternate, then MaxRetriesExceeded)."""

from __future__ import annotations

import json
import uuid as uuidlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar

import pytest

from openkeel.clients.placement import PlacementClient
from openkeel.compute.records import InstanceRecords
from openkeel.compute.service import ComputeService
from openkeel.conductor.service import ConductorService
from openkeel.db.cells import CELL0_UUID
from openkeel.db.repositories import build_requests, instance_mappings
from openkeel.domain.errors import NoValidHost
from openkeel.domain.instances import Instance, InstanceNotFound
from openkeel.rpc.clients.conductor import ConductorRpcClient
from openkeel.rpc.message import CallContext, Target
from openkeel.rpc.server import RpcServer
from openkeel.virt.fake_config import FakeDriverConfig
from tests.compute.cloud import FLAVOR, RESOURCES, Cloud, make_cloud, wait_for
from tests.conftest import CELL1_UUID

CTX = CallContext(user_id="demo", project_id="demo")


@dataclass
class FakeScheduler:
    """Claims on the first host of ``hosts`` and offers the others as alternates."""

    rpc_version: ClassVar[str] = "4.5"
    cloud: Cloud
    hosts: list[ComputeService] = field(default_factory=list)
    before_answer: Any = None

    def _selection(self, compute: ComputeService) -> dict[str, Any]:
        node = compute.host.tracker.node_for(None)
        assert node is not None
        return {
            "service_host": compute.hostname,
            "nodename": node.nodename,
            "compute_node_uuid": node.uuid,
            "cell_uuid": CELL1_UUID,
            "limits": {},
            "allocation_request": self.cloud.allocation_request(compute),
            "allocation_request_version": "1.36",
        }

    def select_destinations(
        self, context: CallContext, spec_obj: Mapping[str, Any], instance_uuids: Sequence[str],
        return_objects: bool = False, return_alternates: bool = False,
    ) -> list[list[dict[str, Any]]]:  # fmt: skip
        if not self.hosts:
            raise NoValidHost("There are not enough hosts available.")
        answer = []
        for uuid in instance_uuids:
            chosen = self._selection(self.hosts[0])
            allocations = json.loads(chosen["allocation_request"])["allocations"]
            self.cloud.placement.claim(
                uuid, {rp: a["resources"] for rp, a in allocations.items()},
                project_id="demo", user_id="demo",
            )  # fmt: skip
            answer.append([chosen] + [self._selection(h) for h in self.hosts[1:]])
        if self.before_answer is not None:
            self.before_answer(instance_uuids)
        return answer


@pytest.fixture
def cloud(tmp_path: Path, placement: PlacementClient) -> Iterator[Cloud]:
    built = make_cloud(tmp_path, placement)
    yield built
    built.close()


@pytest.fixture
def scheduler(cloud: Cloud) -> Iterator[FakeScheduler]:
    fake = FakeScheduler(cloud)
    server = RpcServer(cloud.transport, Target("scheduler", server="s1"), [fake]).start()
    conductor = ConductorService(
        cloud.services.conf, cloud.transport, cloud.services.api_db, cloud.services.cell_dbs,
        cloud.placement, clock=cloud.clock, host="c1",
    ).start()  # fmt: skip
    yield fake
    conductor.stop()
    server.stop()


def _request(cloud: Cloud, uuid: str | None = None) -> Instance:
    """What the servers API stores before casting: mapping (no cell) + build request."""
    instance = Instance(uuid=uuid or str(uuidlib.uuid4()), project_id="demo", user_id="demo",
                        flavor=FLAVOR, display_name="vm", image_ref="img-1",
                        vm_state="building", task_state="scheduling")  # fmt: skip
    with cloud.services.api_db.begin() as conn:
        instance_mappings.create(conn, instance.uuid, "demo", "demo")
        build_requests.create(conn, instance)
    return instance


def _cast(cloud: Cloud, instance: Instance) -> None:
    spec = {"instance_uuid": instance.uuid, "flavor": FLAVOR.to_primitive(), "num_instances": 1}
    ConductorRpcClient(cloud.transport).schedule_and_build_instances(
        CTX, [{"instance_uuid": instance.uuid}], [spec], {}, None, [], None, []
    )


def _cell(cloud: Cloud, uuid: str) -> str | None:
    with cloud.services.api_db.connect() as conn:
        return instance_mappings.get(conn, uuid).cell_uuid


def _build_request_exists(cloud: Cloud, uuid: str) -> bool:
    with cloud.services.api_db.connect() as conn:
        return build_requests.find(conn, uuid) is not None


def test_schedule_and_build_goes_active(cloud: Cloud, scheduler: FakeScheduler) -> None:
    compute = cloud.compute().start(background=False)
    scheduler.hosts = [compute]
    instance = _request(cloud)
    _cast(cloud, instance)
    wait_for(lambda: _cell(cloud, instance.uuid) == CELL1_UUID)
    wait_for(lambda: cloud.cell1.get(instance.uuid).vm_state == "active")
    built = cloud.cell1.get(instance.uuid)
    assert (built.host, built.task_state) == (compute.hostname, None)
    assert not _build_request_exists(cloud, instance.uuid)


def test_no_valid_host_buries_in_cell0_with_fault(cloud: Cloud, scheduler: FakeScheduler) -> None:
    instance = _request(cloud)
    _cast(cloud, instance)
    wait_for(lambda: _cell(cloud, instance.uuid) == CELL0_UUID)
    cell0 = InstanceRecords(cloud.services.cell_dbs[CELL0_UUID], cloud.clock)
    buried = cell0.get(instance.uuid)
    assert (buried.vm_state, buried.task_state, buried.host) == ("error", None, None)
    assert buried.fault is not None
    assert buried.fault.code == 500
    assert buried.fault.message == "No valid host was found. There are not enough hosts available."
    assert not _build_request_exists(cloud, instance.uuid)
    assert cloud.placement.get_allocations(instance.uuid).allocations == {}


def test_build_request_deleted_during_scheduling(cloud: Cloud, scheduler: FakeScheduler) -> None:
    compute = cloud.compute().start(background=False)
    scheduler.hosts = [compute]

    def user_deletes(uuids: Sequence[str]) -> None:
        with cloud.services.api_db.begin() as conn:
            for uuid in uuids:
                build_requests.delete(conn, uuid)

    scheduler.before_answer = user_deletes
    instance = _request(cloud)
    _cast(cloud, instance)
    wait_for(lambda: cloud.placement.get_allocations(instance.uuid).allocations == {})
    wait_for(lambda: _deleted(cloud, instance.uuid))
    assert compute.host.driver.list_instance_uuids() == []


def _deleted(cloud: Cloud, uuid: str) -> bool:
    try:
        cloud.cell1.get(uuid)
    except InstanceNotFound:
        return True
    return False


def test_failed_build_is_rescheduled_to_the_alternate(
    cloud: Cloud, scheduler: FakeScheduler
) -> None:
    uuid = str(uuidlib.uuid4())
    failing = cloud.compute(
        FakeDriverConfig(nodes=(f"f-{uuid}",), fail_spawn_for=frozenset({uuid}))
    )
    failing.start(background=False)
    good = cloud.compute().start(background=False)
    scheduler.hosts = [failing, good]
    instance = _request(cloud, uuid)
    _cast(cloud, instance)
    wait_for(lambda: _cell(cloud, uuid) == CELL1_UUID)
    wait_for(lambda: cloud.cell1.get(uuid).vm_state == "active")
    built = cloud.cell1.get(uuid)
    assert built.host == good.hostname
    good_node = good.host.tracker.node_for(None)
    assert good_node is not None
    assert cloud.placement.get_allocations(uuid).allocations == {good_node.uuid: RESOURCES}
    assert failing.host.driver.list_instance_uuids() == []


def test_reschedule_exhausted_is_error_with_fault(cloud: Cloud, scheduler: FakeScheduler) -> None:
    uuid = str(uuidlib.uuid4())
    hosts = [
        cloud.compute(FakeDriverConfig(nodes=(f"f{i}-{uuid}",), fail_spawn_for=frozenset({uuid})))
        for i in range(2)
    ]
    for host in hosts:
        host.start(background=False)
    scheduler.hosts = hosts
    instance = _request(cloud, uuid)
    _cast(cloud, instance)
    wait_for(lambda: _cell(cloud, uuid) == CELL1_UUID)
    expected = (
        "Exceeded maximum number of retries. Exhausted all hosts available for retrying "
        f"build failures for instance {uuid}."
    )

    def settled() -> bool:
        # The last host's spawn failure lands first, the reschedule's verdict right after.
        current = cloud.cell1.get(uuid)
        return (
            current.vm_state == "error"
            and bool(current.fault)
            and (current.fault is not None and current.fault.message == expected)
        )

    wait_for(settled)
    failed = cloud.cell1.get(uuid)
    assert failed.task_state is None
    assert failed.fault is not None
    assert failed.fault.message == expected
    wait_for(lambda: cloud.placement.get_allocations(uuid).allocations == {})


def test_instance_payload_unchanged(cloud: Cloud) -> None:
    instance = replace(_request(cloud), display_name="x")
    assert Instance.from_primitive(instance.to_primitive()) == instance
