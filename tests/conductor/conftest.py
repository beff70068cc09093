"""Fixtures of the conductor tests: one embedded Placement for the package."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from openkeel.clients.placement import PlacementClient
from openkeel.clients.placement_embedded import EmbeddedPlacement


@pytest.fixture(scope="package")
def placement(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PlacementClient]:
    with EmbeddedPlacement(Path(tmp_path_factory.mktemp("placement"))) as service:
        client = service.client(backoff=lambda attempt: None)
        yield client
        client.close()
