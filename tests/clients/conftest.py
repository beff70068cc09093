"""Fixtures of the outbound client tests: a fresh embedded Placement per test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from openkeel.clients.placement import PlacementClient
from openkeel.clients.placement_embedded import EmbeddedPlacement


@pytest.fixture
def embedded_placement(tmp_path: Path) -> Iterator[EmbeddedPlacement]:
    with EmbeddedPlacement(tmp_path / "placement") as service:
        yield service


@pytest.fixture
def placement(embedded_placement: EmbeddedPlacement) -> Iterator[PlacementClient]:
    client = embedded_placement.client(backoff=lambda attempt: None)
    yield client
    client.close()
