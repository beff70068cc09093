"""Fault-injection tests: the ``disruptive`` ones restart shared services, so they run last."""

from __future__ import annotations

from pathlib import Path

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "disruptive: restarts the shared RabbitMQ / PostgreSQL (runs last)"
    )


HERE = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every fault test is ``serial`` (scripts/test.sh runs them alone, after the parallel
    phase: they kill processes and time their recovery); the disruptive ones go last, after
    every test that needs the services they restart."""
    for item in items:
        if item.path.is_relative_to(HERE):
            item.add_marker(pytest.mark.serial)
    items.sort(key=lambda item: item.get_closest_marker("disruptive") is not None)
