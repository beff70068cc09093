"""GET /os-migrations (filters: instance_uuid, status, migration_type, host, source_compute;
2.80 project_id/user_id). Paging (2.59 limit/marker) is not implemented yet."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from openkeel.api.request import ApiRequest
from openkeel.api.resources.migrations import views
from openkeel.db.repositories import migrations

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
    status = _one(req, "status")
    kind = _one(req, "migration_type")
    found = []
    for engine in (req.services.cell_dbs or {}).values():
        with engine.connect() as conn:
            found += migrations.list_migrations(
                conn,
                instance_uuid=_one(req, "instance_uuid"),
                statuses=[status] if status else (),
                migration_types=[kind] if kind else (),
                host=_one(req, "host") or _one(req, "source_compute"),
                project_id=project_id,
                user_id=_one(req, "user_id") if req.at_least("2.80") else None,
            )
    found.sort(key=lambda m: (m.created_at or datetime.min, m.id), reverse=True)
    return {"migrations": [views.migration(req, m, show_hosts) for m in found]}
