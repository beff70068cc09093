"""Route of GET /os-migrations."""

from __future__ import annotations

from openkeel.api.resources.migrations import handlers
from openkeel.api.routing import RouteTable, endpoint


def register(table: RouteTable) -> None:
    """Add the os-migrations list."""
    table.add(
        "GET",
        "/os-migrations",
        endpoint(handlers.list_migrations, policy="os_compute_api:os-migrations:index"),
    )
