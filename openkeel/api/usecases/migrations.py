"""Migrations use case: the migrations of every cell that match the os-migrations filters,
newest first. Called by the os-migrations handler, which checks the policy and shapes the view.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from openkeel.api.services import ApiServices
from openkeel.db.engine import reader
from openkeel.db.repositories import migrations
from openkeel.domain.migrations import Migration


@dataclass(frozen=True)
class MigrationFilters:
    """What ``GET /os-migrations`` may filter on (None/empty: not filtered)."""

    instance_uuid: str | None = None
    status: str | None = None
    migration_type: str | None = None
    host: str | None = None
    project_id: str | None = None
    user_id: str | None = None


def list_migrations(services: ApiServices, filters: MigrationFilters) -> list[Migration]:
    """The matching migrations of every cell, newest first (read-only transactions)."""
    found: list[Migration] = []
    for engine in (services.cell_dbs or {}).values():
        with reader(engine).connect() as conn:
            found += migrations.list_migrations(
                conn,
                instance_uuid=filters.instance_uuid,
                statuses=[filters.status] if filters.status else (),
                migration_types=[filters.migration_type] if filters.migration_type else (),
                host=filters.host,
                project_id=filters.project_id,
                user_id=filters.user_id,
            )
    found.sort(key=lambda m: (m.created_at or datetime.min, m.id), reverse=True)
    return found
