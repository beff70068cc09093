"""Fixtures for the scheduler tests: one embedded Placement for this package (one may run per
process; it is stopped when the package is done so other packages can start theirs), a
migrated SQLite cell DB per test, and a ``Cloud`` that registers fake compute hosts in both
(service row, compute node row, resource provider with inventories).
"""

from __future__ import annotations

import datetime
import random
import shutil
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import sqlalchemy as sa

from openkeel.clients.placement import PlacementClient
from openkeel.clients.placement_embedded import EmbeddedPlacement
from openkeel.clients.placement_models import Inventory
from openkeel.conf import make_config
from openkeel.db import migrate
from openkeel.db.engine import make_engine
from openkeel.db.repositories import compute_nodes, services
from openkeel.scheduler.endpoint import SchedulerEndpoint

NOW = datetime.datetime(2025, 1, 1, 12, 0, 0)
CELL1 = "11111111-1111-1111-1111-111111111111"


@pytest.fixture(scope="package")
def embedded_placement(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedPlacement]:
    with EmbeddedPlacement(tmp_path_factory.mktemp("placement")) as service:
        yield service


@pytest.fixture(scope="package")
def cell_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cell-template") / "cell.sqlite"
    engine = make_engine(f"sqlite:///{path}")
    migrate.upgrade(engine, "cell")
    engine.dispose()
    return path


@dataclass
class Cloud:
    """Fake compute hosts in a cell DB and Placement; builds scheduler endpoints over them."""

    placement: PlacementClient
    cell: sa.Engine
    providers: dict[str, str] = field(default_factory=dict)  # host -> provider/node uuid
    overrides: dict[str, object] = field(default_factory=dict)
    now: datetime.datetime = NOW

    def add_host(
        self,
        host: str,
        *,
        vcpus: int = 4,
        memory_mb: int = 2048,
        disk_gb: int = 40,
        disabled: bool = False,
        last_seen_up: datetime.datetime | None = NOW,
        supported_instances: str | None = '[["x86_64", "kvm", "hvm"]]',
    ) -> str:
        node_uuid = str(uuid.uuid4())
        with self.cell.begin() as conn:
            services.create_service(
                conn, host, "nova-compute", disabled=disabled, last_seen_up=last_seen_up
            )
            compute_nodes.create_compute_node(
                conn,
                host,
                f"{host}.node",
                uuid=node_uuid,
                vcpus=vcpus,
                memory_mb=memory_mb,
                local_gb=disk_gb,
                free_ram_mb=memory_mb,
                free_disk_gb=disk_gb,
                cpu_allocation_ratio=1.0,
                ram_allocation_ratio=1.0,
                disk_allocation_ratio=1.0,
                supported_instances=supported_instances,
            )
        self.placement.create_provider(f"{host}.node", uuid=node_uuid)
        self.placement.set_inventories(
            node_uuid,
            {
                "VCPU": Inventory(total=vcpus),
                "MEMORY_MB": Inventory(total=memory_mb),
                "DISK_GB": Inventory(total=disk_gb),
            },
        )
        self.providers[host] = node_uuid
        return node_uuid

    def endpoint(self, **overrides: object) -> SchedulerEndpoint:
        conf = make_config(overrides={**self.overrides, **overrides})
        return SchedulerEndpoint.from_conf(
            conf,
            self.placement,
            {CELL1: self.cell},
            clock=lambda: self.now,
            rng=random.Random(7),
        )

    def host_of(self, consumer: str) -> str | None:
        """The host whose provider holds ``consumer``'s allocations."""
        allocations = self.placement.get_allocations(consumer).allocations
        by_uuid = {v: k for k, v in self.providers.items()}
        hosts = [by_uuid[rp] for rp in allocations if rp in by_uuid]
        return hosts[0] if hosts else None

    def cleanup(self) -> None:
        for node_uuid in self.providers.values():
            for consumer in self.placement.get_provider_allocations(node_uuid):
                self.placement.delete_allocations(consumer, force=True)
            self.placement.delete_provider(node_uuid)


@pytest.fixture
def cloud(
    embedded_placement: EmbeddedPlacement, cell_template: Path, tmp_path: Path
) -> Iterator[Cloud]:
    path = tmp_path / "cell.sqlite"
    shutil.copy(cell_template, path)
    engine = make_engine(f"sqlite:///{path}")
    client = embedded_placement.client()
    made = Cloud(client, engine)
    try:
        yield made
    finally:
        made.cleanup()
        client.close()
        engine.dispose()
