"""Response bodies of ``/os-hypervisors`` per microversion."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

from openkeel.api.request import ApiRequest
from openkeel.api.usecases.hypervisors import Hypervisor

_DETAIL_V21 = ("hypervisor_type", "hypervisor_version", "host_ip")
# Removed from the detailed view in 2.88.
_RESOURCES = (
    "vcpus",
    "memory_mb",
    "local_gb",
    "vcpus_used",
    "memory_mb_used",
    "local_gb_used",
    "free_ram_mb",
    "free_disk_gb",
    "current_workload",
    "running_vms",
    "disk_available_least",
)


def _cpu_info(req: ApiRequest, raw: str) -> Any:
    if not req.at_least("2.28"):
        return raw
    return json.loads(raw) if raw else {}


def _details(req: ApiRequest, hyp: Hypervisor) -> dict[str, Any]:
    node, service = hyp.node, hyp.service
    uuid_ids = req.at_least("2.53")
    body: dict[str, Any] = {f: getattr(node, f) for f in _DETAIL_V21}
    body["host_ip"] = str(node.host_ip) if node.host_ip is not None else None
    body["service"] = {
        "id": service.uuid if uuid_ids else service.id,
        "host": node.host,
        "disabled_reason": service.disabled_reason,
    }
    if req.at_least("2.88"):
        body["uptime"] = hyp.uptime
    else:
        body.update({f: getattr(node, f) for f in _RESOURCES})
        body["cpu_info"] = _cpu_info(req, node.cpu_info)
    return body


def hypervisor(
    req: ApiRequest, hyp: Hypervisor, detail: bool, with_servers: bool = False
) -> dict[str, Any]:
    """One hypervisor, summary or detailed, with its servers when asked for."""
    body: dict[str, Any] = {
        "id": hyp.node.uuid if req.at_least("2.53") else hyp.node.id,
        "hypervisor_hostname": hyp.node.hypervisor_hostname,
        "state": "up" if hyp.up else "down",
        "status": "disabled" if hyp.service.disabled else "enabled",
    }
    if detail:
        body.update(_details(req, hyp))
    if hyp.servers:
        body["servers"] = [{"name": s.name, "uuid": s.uuid} for s in hyp.servers]
    elif with_servers and req.at_least("2.75"):
        body["servers"] = []
    return body


def collection(
    req: ApiRequest,
    items: list[dict[str, Any]],
    detail: bool,
    page_size: int | None,
) -> dict[str, Any]:
    """``{"hypervisors": [...]}`` with the next link when paging and the page is full."""
    body: dict[str, Any] = {"hypervisors": items}
    if page_size and page_size == len(items):
        path = "os-hypervisors/detail" if detail else "os-hypervisors"
        params: dict[str, str] = {}
        for name, value in sorted((k, v) for k, vals in req.query.items() for v in vals):
            params[name] = value
        params["marker"] = str(items[-1]["id"])
        href = f"{req.self_link(path)}?{urlencode(params)}"
        body["hypervisors_links"] = [{"rel": "next", "href": href}]
    return body
