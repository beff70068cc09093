"""Migrations: the record of one resize / cold migration (cell DB ``migrations``), Nova's statuses.

Created by the conductor's migrate_server task, advanced by the compute resize operations,
read by the servers API (confirm/revert find the ``finished`` one) and the os-migrations API.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from openkeel.domain.errors import Invalid, NotFound

# Nova's cold-move statuses, in order; "error" on failure.
PRE_MIGRATING = "pre-migrating"
MIGRATING = "migrating"
POST_MIGRATING = "post-migrating"
FINISHED = "finished"
CONFIRMING = "confirming"
CONFIRMED = "confirmed"
REVERTING = "reverting"
REVERTED = "reverted"
ERROR = "error"
# Nova's live-migration statuses (conductor accepted → compute preparing/running → end).
ACCEPTED = "accepted"
QUEUED = "queued"
PREPARING = "preparing"
RUNNING = "running"
COMPLETED = "completed"
DONE = "done"  # an evacuation rebuilt on its destination (the source cleans up later)
CANCELLED = "cancelled"
FAILED = "failed"
LIVE_IN_PROGRESS = (QUEUED, PREPARING, RUNNING, POST_MIGRATING)
LIVE_MIGRATION = "live-migration"


class MigrationNotFound(NotFound):
    def __init__(self, migration_id: int | str) -> None:
        super().__init__(f"Migration {migration_id} could not be found.")


class MigrationNotFoundByStatus(Invalid):
    """No migration of the instance in that status (the API answers 400 for resize)."""

    def __init__(self, instance_id: str, status: str) -> None:
        super().__init__(f"Migration not found for instance {instance_id} with status {status}.")
        self.instance_id = instance_id
        self.status = status


class MigrationNotFoundForInstance(NotFound):
    def __init__(self, migration_id: int | str, instance_id: str) -> None:
        super().__init__(f"Migration {migration_id} not found for instance {instance_id}")


class InvalidMigrationState(Invalid):
    def __init__(self, migration_id: int | str, instance_uuid: str, state: str, method: str):
        super().__init__(
            f"Migration {migration_id} state of instance {instance_uuid} is {state}. "
            f"Cannot {method} while the migration is in this state."
        )


@dataclass(frozen=True)
class Migration:
    """One row of ``migrations``."""

    id: int
    uuid: str
    instance_uuid: str
    status: str
    migration_type: str
    source_compute: str | None = None
    source_node: str | None = None
    dest_compute: str | None = None
    dest_node: str | None = None
    dest_host: str | None = None
    old_instance_type_id: int | None = None
    new_instance_type_id: int | None = None
    user_id: str | None = None
    project_id: str | None = None
    hidden: bool = False
    memory_total: int | None = None
    memory_processed: int | None = None
    memory_remaining: int | None = None
    disk_total: int | None = None
    disk_processed: int | None = None
    disk_remaining: int | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None

    @property
    def is_resize(self) -> bool:
        return self.migration_type == "resize"

    def to_primitive(self) -> dict[str, Any]:
        data = asdict(self)
        for key in ("created_at", "updated_at"):
            value = data[key]
            data[key] = value.isoformat() if value is not None else None
        return data

    @classmethod
    def from_primitive(cls, data: Mapping[str, Any]) -> Migration:
        names = cls.__dataclass_fields__
        values = {k: v for k, v in data.items() if k in names}
        for key in ("created_at", "updated_at"):
            if isinstance(values.get(key), str):
                values[key] = datetime.fromisoformat(values[key])
        return cls(**values)
