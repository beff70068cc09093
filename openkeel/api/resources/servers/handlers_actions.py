"""``POST /servers/{id}/action`` handlers of this package: os-start, os-stop, reboot,
forceDelete and restore."""

from __future__ import annotations

from openkeel.api.request import ApiRequest
from openkeel.api.usecases.servers.lifecycle import ServerLifecycle

DEFERRED_DELETE = "os_compute_api:os-deferred-delete:%s"


def _lifecycle(req: ApiRequest) -> ServerLifecycle:
    return ServerLifecycle(req.services, req.context)


def start_server(req: ApiRequest) -> None:
    """os-start."""
    lifecycle = _lifecycle(req)
    found = lifecycle.find(req.params["id"])
    lifecycle.authorize("start", found)
    lifecycle.start(found)


def stop_server(req: ApiRequest) -> None:
    """os-stop."""
    lifecycle = _lifecycle(req)
    found = lifecycle.find(req.params["id"])
    lifecycle.authorize("stop", found)
    lifecycle.stop(found)


def reboot_server(req: ApiRequest) -> None:
    """reboot (SOFT or HARD)."""
    lifecycle = _lifecycle(req)
    found = lifecycle.find(req.params["id"])
    lifecycle.authorize("reboot", found, with_user=False)
    lifecycle.reboot(found, req.body["reboot"]["type"].upper())


def force_delete_server(req: ApiRequest) -> None:
    """forceDelete."""
    lifecycle = _lifecycle(req)
    found = lifecycle.find(req.params["id"])
    target = {"project_id": found.instance.project_id, "user_id": found.instance.user_id}
    req.context.can(DEFERRED_DELETE % "force", target)
    lifecycle.force_delete(found)


def restore_server(req: ApiRequest) -> None:
    """restore."""
    lifecycle = _lifecycle(req)
    found = lifecycle.find(req.params["id"])
    req.context.can(DEFERRED_DELETE % "restore", {"project_id": found.instance.project_id})
    lifecycle.restore(found)
