"""Handlers of migrate (this package's route) and of resize / confirmResize / revertResize
(routed by the servers resource, which delegates here)."""

from __future__ import annotations

from openkeel.api.request import ApiRequest
from openkeel.api.usecases.migrate_server import ServerMover
from openkeel.api.usecases.servers.lookup import FoundServer, find_server

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
