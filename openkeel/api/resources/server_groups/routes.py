"""Routes of os-server-groups (filled in below)."""

from __future__ import annotations

from openkeel.api.routing import RouteTable


def register(table: RouteTable) -> None:
    """Add the os-server-groups routes to ``table``."""
