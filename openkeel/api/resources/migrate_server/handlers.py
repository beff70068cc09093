"""Handlers of migrate and os-migrateLive (this package's routes) and of resize / confirmResize / revertResize
(routed by the servers resource, which delegates here)."""

from __future__ import annotations

from openkeel.api.request import ApiRequest
from openkeel.api.resources.servers.create_request import as_bool
from openkeel.api.usecases.live_migrate import LiveMigrator
from openkeel.api.usecases.migrate_server import ServerMover
from openkeel.api.usecases.servers.lookup import FoundServer, find_server
from openkeel.domain.errors import Invalid

POLICY = "os_compute_api:os-migrate-server:%s"
SERVERS_POLICY = "os_compute_api:servers:%s"


def _found(req: ApiRequest, action: str, with_user: bool) -> FoundServer:
    found = find_server(req.services, req.context, req.params["id"])
    inst = found.instance
    target = {"project_id": inst.project_id}
    if with_user:
        target["user_id"] = inst.user_id
    req.context.can(SERVERS_POLICY % action, target)
    return found


def migrate(req: ApiRequest) -> None:
    """POST /servers/{id}/action {"migrate": ...} (202)."""
    found = find_server(req.services, req.context, req.params["id"])
    body = req.body.get("migrate")
    host = body.get("host") if req.at_least("2.56") and isinstance(body, dict) else None
    rule = "migrate:host" if host else "migrate"
    req.context.can(POLICY % rule, {"project_id": found.instance.project_id})
    ServerMover(req.services, req.context).migrate(found, host)


def migrate_live(req: ApiRequest) -> None:
    """POST /servers/{id}/action {"os-migrateLive": {...}} (202)."""
    found = find_server(req.services, req.context, req.params["id"])
    body = req.body["os-migrateLive"]
    host = body["host"]
    rule = "migrate_live:host" if host else "migrate_live"
    req.context.can(POLICY % rule, {"project_id": found.instance.project_id})
    force = None
    if req.at_least("2.30"):
        force = as_bool(body.get("force", False))
        if force and not host:
            raise Invalid("Can't force to a non-provided destination")
    disk_over_commit: bool | None = None
    block = body["block_migration"]
    if not req.at_least("2.25"):
        disk_over_commit = as_bool(body["disk_over_commit"])
    block_migration = None if block == "auto" else as_bool(block)
    LiveMigrator(req.services, req.context).live_migrate(
        found, host, block_migration, disk_over_commit, force
    )


def resize(req: ApiRequest) -> None:
    """POST /servers/{id}/action {"resize": {"flavorRef": ...}} (202)."""
    found = _found(req, "resize", with_user=True)
    body = req.body["resize"]
    disk_config = body.get("OS-DCF:diskConfig")
    auto = None if disk_config is None else disk_config == "AUTO"
    ServerMover(req.services, req.context).resize(found, str(body["flavorRef"]), auto)


def confirm_resize(req: ApiRequest) -> None:
    """confirmResize (204)."""
    found = _found(req, "confirm_resize", with_user=False)
    ServerMover(req.services, req.context).confirm(found)


def revert_resize(req: ApiRequest) -> None:
    """revertResize (202)."""
    found = _found(req, "revert_resize", with_user=True)
    ServerMover(req.services, req.context).revert(found)
