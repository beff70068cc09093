"""A small test cloud for the compute and conductor tests: databases, transport, computes."""

from __future__ import annotations

import json
import time
import uuid as uuidlib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from openkeel.api.services import ApiServices
from openkeel.clients.placement import PlacementClient
from openkeel.compute.service import ComputeService
from openkeel.db.records import InstanceRecords
from openkeel.db.repositories import instance_mappings
from openkeel.domain.instances import FlavorSnapshot, Instance
from openkeel.rpc import get_transport
from openkeel.rpc.transport import Transport
from openkeel.runtime.clock import FakeClock
from openkeel.virt.fake import FakeDriver
from openkeel.virt.fake_config import FakeDriverConfig
from tests.conftest import CELL1_UUID, make_services

FLAVOR = FlavorSnapshot(flavorid="1", name="m1.tiny", memory_mb=512, vcpus=1, root_gb=1, id=1)
RESOURCES = {"VCPU": 1, "MEMORY_MB": 512, "DISK_GB": 1}


@dataclass
class Cloud:
    services: ApiServices
    placement: PlacementClient
    transport: Transport
    clock: FakeClock = field(default_factory=FakeClock)
    computes: list[ComputeService] = field(default_factory=list)

    @property
    def cell1(self) -> InstanceRecords:
        return InstanceRecords(self.services.cell_dbs[CELL1_UUID], self.clock)

    def compute(
        self, config: FakeDriverConfig | None = None, **overrides: object
    ) -> ComputeService:
        name = f"host-{uuidlib.uuid4().hex[:8]}"
        driver = FakeDriver(
            config or FakeDriverConfig(nodes=(f"{name}-node",)), sleep=lambda s: None
        )
        for key, value in overrides.items():
            self.services.conf.set_override(key, value)
        service = ComputeService(
            self.services.conf,
            driver,
            self.transport,
            self.placement,
            self.services.api_db,
            self.services.cell_dbs[CELL1_UUID],
            clock=self.clock,
            cell_uuid=CELL1_UUID,
            host=name,
        )
        self.computes.append(service)
        return service

    def instance(self, compute: ComputeService | None = None, **values: object) -> Instance:
        """A scheduled instance (row in cell1, mapping, allocation on ``compute``)."""
        uuid = str(uuidlib.uuid4())
        base = Instance(uuid=uuid, project_id="demo", user_id="demo", flavor=FLAVOR,
                        display_name="vm", hostname="vm", image_ref="img-1",
                        vm_state="building", task_state="scheduling")  # fmt: skip
        if compute is not None:
            node = compute.host.tracker.node_for(None)
            assert node is not None
            base = replace(base, host=compute.hostname, node=node.nodename)
            self.placement.claim(uuid, {node.uuid: RESOURCES}, project_id="demo", user_id="demo")
        with self.services.api_db.begin() as conn:
            instance_mappings.create(conn, uuid, "demo", "demo", cell_uuid=CELL1_UUID)
        return self.cell1.create(replace(base, **values))  # type: ignore[arg-type]

    def allocation_request(self, compute: ComputeService) -> str:
        node = compute.host.tracker.node_for(None)
        assert node is not None
        return json.dumps({"allocations": {node.uuid: {"resources": RESOURCES}}})

    def close(self) -> None:
        for compute in self.computes:
            compute.stop()
        self.transport.close()


def make_cloud(tmp_path: Path, placement: PlacementClient) -> Cloud:
    services = make_services(tmp_path)
    transport = get_transport(f"inproc://{uuidlib.uuid4().hex}")
    return Cloud(services, placement, transport)


def wait_for(predicate: Callable[[], bool], timeout: float = 10.0) -> None:
    """Poll ``predicate`` until true (real asynchrony: RPC casts on thread pools)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached before the deadline")
        time.sleep(0.01)
