"""Handlers of /servers/{server_id}/migrations: list and show the in-progress live migrations,
abort one (DELETE), force it to complete (action)."""

from __future__ import annotations

from typing import Any

from openkeel.api.request import ApiRequest
from openkeel.api.resources.server_migrations import views
from openkeel.api.usecases.live_migrate import LiveMigrator
from openkeel.api.usecases.servers.lookup import FoundServer, find_server
from openkeel.domain import migrations as mstatus
from openkeel.domain.errors import NotFound

POLICY = "os_compute_api:servers:migrations:%s"


def _found(req: ApiRequest, rule: str) -> FoundServer:
    found = find_server(req.services, req.context, req.params["server_id"])
    req.context.can(POLICY % rule, {"project_id": found.instance.project_id})
    return found


def list_server_migrations(req: ApiRequest) -> dict[str, Any]:
    """GET /servers/{server_id}/migrations (2.23+)."""
    found = _found(req, "index")
    target = {"project_id": found.instance.project_id}
    include_host = req.context.can(POLICY % "index:host", target, fatal=False)
    items = LiveMigrator(req.services, req.context).in_progress(found)
    return {"migrations": [views.migration(req, m, include_host) for m in items]}


def show_server_migration(req: ApiRequest) -> dict[str, Any]:
    """GET /servers/{server_id}/migrations/{id} (2.23+): 404 unless an in-progress live one."""
    found = _found(req, "show")
    mid, uuid = req.params["id"], found.instance.uuid
    try:
        item = LiveMigrator(req.services, req.context).migration(found, mid)
    except NotFound:
        raise NotFound(
            f"In-progress live migration {mid} is not found for server {uuid}."
        ) from None
    if item.migration_type != mstatus.LIVE_MIGRATION:
        raise NotFound(f"Migration {mid} for server {uuid} is not live-migration.")
    if item.status not in mstatus.LIVE_IN_PROGRESS:
        raise NotFound(f"Live migration {mid} for server {uuid} is not in progress.")
    return {"migration": views.migration(req, item)}


def abort_server_migration(req: ApiRequest) -> None:
    """DELETE /servers/{server_id}/migrations/{id} (2.24+, 202); queued ones too from 2.65."""
    found = _found(req, "delete")
    LiveMigrator(req.services, req.context).abort(found, req.params["id"], req.at_least("2.65"))


def force_complete(req: ApiRequest) -> None:
    """POST /servers/{server_id}/migrations/{id}/action {"force_complete": null} (2.22+, 202)."""
    found = _found(req, "force_complete")
    LiveMigrator(req.services, req.context).force_complete(found, req.params["id"])
