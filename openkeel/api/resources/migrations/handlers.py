"""GET /os-migrations (filters: instance_uuid, status, migration_type, host, source_compute;
2.80 project_id/user_id). Paging (2.59 limit/marker) is not implemented yet."""

from __future__ import annotations

from typing import Any

from openkeel.api.request import ApiRequest
from openkeel.api.resources.migrations import views
from openkeel.api.usecases.migrations import MigrationFilters
from openkeel.api.usecases.migrations import list_migrations as find

POLICY = "os_compute_api:os-migrations:%s"


def _one(req: ApiRequest, name: str) -> str | None:
    values = req.query.get(name) or []
    return str(values[-1]) if values else None


def list_migrations(req: ApiRequest) -> dict[str, Any]:
    """All migrations visible to the caller, newest first."""
    ctx = req.context
    ctx.can(POLICY % "index")
    project_id = _one(req, "project_id") if req.at_least("2.80") else None
    if not project_id or project_id != ctx.project_id:
        ctx.can(POLICY % "index:all_projects")
    show_hosts = bool(ctx.can(POLICY % "index:host", fatal=False))
    filters = MigrationFilters(
        instance_uuid=_one(req, "instance_uuid"),
        status=_one(req, "status"),
        migration_type=_one(req, "migration_type"),
        host=_one(req, "host") or _one(req, "source_compute"),
        project_id=project_id,
        user_id=_one(req, "user_id") if req.at_least("2.80") else None,
    )
    found = find(req.services, filters)
    return {"migrations": [views.migration(req, m, show_hosts) for m in found]}
