"""Fixtures shared by the API-tier tests (``api`` and ``services`` come from tests/conftest.py)."""

from __future__ import annotations

import pytest

from openkeel.api.services import ApiServices
from tests.api.server_fakes import Recorder, wire


@pytest.fixture
def roles(services: ApiServices) -> tuple[Recorder, Recorder]:
    """The conductor and compute RPC stand-ins wired into ``services`` (what the API casts)."""
    return wire(services)
