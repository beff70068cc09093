"""Handlers of os-hosts (up to 2.42): list (zone filter), show (resource rows), update
(status, maintenance_mode) and the power actions, in Nova's bodies."""

from __future__ import annotations

from typing import Any

from openkeel.api.request import ApiRequest
from openkeel.api.usecases.hosts import HostAdmin, HostResources
from openkeel.api.usecases.servers.create import call_context

POLICY = "os_compute_api:os-hosts:%s"


def list_hosts(req: ApiRequest) -> dict[str, Any]:
    """GET /os-hosts."""
    req.context.can(POLICY % "list", target={})
    values = req.query.get("zone") or []
    zone = str(values[-1]) if values else None
    hosts = HostAdmin(req.services).listing(zone)
    return {"hosts": [{"host_name": h.host_name, "service": h.service, "zone": h.zone} for h in hosts]}  # fmt: skip


def _row(host: str, project: str, cpu: int, memory_mb: int, disk_gb: int) -> dict[str, Any]:
    return {"resource": {"host": host, "project": project, "cpu": cpu, "memory_mb": memory_mb, "disk_gb": disk_gb}}  # fmt: skip


def _rows(found: HostResources) -> list[dict[str, Any]]:
    host, node, usage = found.host, found.node, found.usage
    rows = [
        _row(host, "(total)", node.vcpus, node.memory_mb, node.local_gb),
        _row(host, "(used_now)", node.vcpus_used, node.memory_mb_used, node.local_gb_used),
        _row(host, "(used_max)", sum(u.vcpus for u in usage), sum(u.memory_mb for u in usage),
             sum(u.disk_gb for u in usage)),
    ]  # fmt: skip
    projects: dict[str | None, dict[str, Any]] = {}
    for item in usage:
        row = projects.setdefault(item.project_id, _row(host, item.project_id or "", 0, 0, 0))
        row["resource"]["cpu"] += item.vcpus
        row["resource"]["memory_mb"] += item.memory_mb
        row["resource"]["disk_gb"] += item.disk_gb
    return rows + list(projects.values())


def show_host(req: ApiRequest) -> dict[str, Any]:
    """GET /os-hosts/{id}."""
    req.context.can(POLICY % "show", target={})
    return {"host": _rows(HostAdmin(req.services).resources(req.params["id"]))}


def update_host(req: ApiRequest) -> dict[str, Any]:
    """PUT /os-hosts/{id}: the body's switches as the host's driver set them."""
    req.context.can(POLICY % "update", target={})
    host, body = req.params["id"], req.body
    admin, context = HostAdmin(req.services), call_context(req.context)
    result: dict[str, Any] = {"host": host}
    if body.get("status") is not None:
        enabled = body["status"].strip().lower() == "enable"
        result["status"] = admin.set_enabled(context, host, enabled)
    if body.get("maintenance_mode") is not None:
        mode = body["maintenance_mode"].strip().lower() == "enable"
        result["maintenance_mode"] = admin.set_maintenance(context, host, mode)
    return result


def _power(req: ApiRequest, rule: str, action: str) -> dict[str, Any]:
    req.context.can(POLICY % rule, target={})
    host = req.params["id"]
    done = HostAdmin(req.services).power_action(call_context(req.context), host, action)
    return {"host": host, "power_action": done}


def reboot_host(req: ApiRequest) -> dict[str, Any]:
    """GET /os-hosts/{id}/reboot."""
    return _power(req, "reboot", "reboot")


def shutdown_host(req: ApiRequest) -> dict[str, Any]:
    """GET /os-hosts/{id}/shutdown."""
    return _power(req, "shutdown", "shutdown")


def startup_host(req: ApiRequest) -> dict[str, Any]:
    """GET /os-hosts/{id}/startup."""
    return _power(req, "start", "startup")
