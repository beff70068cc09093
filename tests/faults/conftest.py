"""Fault-injection tests: the ``disruptive`` ones restart shared services, so they run last."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "disruptive: restarts the shared RabbitMQ / PostgreSQL (runs last)"
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Move disruptive tests to the end of the session, after every test that needs the
    services they restart."""
    items.sort(key=lambda item: item.get_closest_marker("disruptive") is not None)
