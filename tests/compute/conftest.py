"""Fixtures of the compute and conductor tests: one embedded Placement per test package, a
fresh cloud (API DB, cell0, cell1 on SQLite) per test, in-process RPC, FakeDriver hosts."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from openkeel.clients.placement import PlacementClient
from openkeel.clients.placement_embedded import EmbeddedPlacement
from tests.compute.cloud import Cloud, make_cloud


@pytest.fixture(scope="package")
def placement(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PlacementClient]:
    with EmbeddedPlacement(Path(tmp_path_factory.mktemp("placement"))) as service:
        client = service.client(backoff=lambda attempt: None)
        yield client
        client.close()


@pytest.fixture
def cloud(tmp_path: Path, placement: PlacementClient) -> Iterator[Cloud]:
    built = make_cloud(tmp_path, placement)
    yield built
    built.close()
