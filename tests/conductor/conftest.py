"""Fixtures of the conductor tests: one embedded Placement for the package, a compute-test cloud
with a conductor and a scripted scheduler, and the steps the servers API takes before a cast."""

from __future__ import annotations

import json
import uuid as uuidlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import pytest

from openkeel.clients.placement import PlacementClient
from openkeel.clients.placement_embedded import EmbeddedPlacement
from openkeel.compute.service import ComputeService
from openkeel.conductor.service import ConductorService
from openkeel.db.repositories import build_requests, instance_mappings
from openkeel.domain.errors import NoValidHost
from openkeel.domain.instances import Instance
from openkeel.rpc.clients.conductor import ConductorRpcClient
from openkeel.rpc.message import CallContext, Target
from openkeel.rpc.messages.conductor import ScheduleAndBuildInstances
from openkeel.rpc.server import RpcServer
from tests.compute.cloud import FLAVOR, Cloud, make_cloud
from tests.conftest import CELL1_UUID


@pytest.fixture(scope="package")
def placement(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PlacementClient]:
    with EmbeddedPlacement(Path(tmp_path_factory.mktemp("placement"))) as service:
        client = service.client(backoff=lambda attempt: None)
        yield client
        client.close()


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


def request_build(cloud: Cloud, uuid: str | None = None) -> Instance:
    """What the servers API stores before casting: mapping (no cell) + build request."""
    instance = Instance(uuid=uuid or str(uuidlib.uuid4()), project_id="demo", user_id="demo",
                        flavor=FLAVOR, display_name="vm", image_ref="img-1",
                        vm_state="building", task_state="scheduling")  # fmt: skip
    with cloud.services.api_db.begin() as conn:
        instance_mappings.create(conn, instance.uuid, "demo", "demo")
        build_requests.create(conn, instance)
    return instance


def cast_build(cloud: Cloud, instance: Instance) -> None:
    spec = {"instance_uuid": instance.uuid, "flavor": FLAVOR.to_primitive(), "num_instances": 1}
    message = ScheduleAndBuildInstances((instance.uuid,), (spec,))
    ConductorRpcClient(cloud.transport).cast(CTX, message)


def cell_of(cloud: Cloud, uuid: str) -> str | None:
    with cloud.services.api_db.connect() as conn:
        return instance_mappings.get(conn, uuid).cell_uuid


def build_request_exists(cloud: Cloud, uuid: str) -> bool:
    with cloud.services.api_db.connect() as conn:
        return build_requests.find(conn, uuid) is not None
