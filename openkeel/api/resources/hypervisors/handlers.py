"""Handlers of ``/os-hypervisors``: index, detail, show, statistics, uptime, search, servers."""

from __future__ import annotations

import dataclasses
from typing import Any

from openkeel.api.request import ApiRequest
from openkeel.api.resources.hypervisors import views
from openkeel.api.usecases.hypervisors import Hypervisor, HypervisorCatalog, not_found
from openkeel.api.usecases.servers.create import call_context
from openkeel.api.usecases.services import is_uuid_like
from openkeel.domain.errors import Invalid

POLICY = "os_compute_api:os-hypervisors:%s"
_TRUE = frozenset({"1", "t", "true", "on", "y", "yes"})


def _with_servers(req: ApiRequest) -> bool:
    value = req.query_value("with_servers") if req.at_least("2.53") else None
    return value is not None and value.strip().lower() in _TRUE


def _listing(req: ApiRequest, detail: bool) -> dict[str, Any]:
    catalog = HypervisorCatalog(req.services)
    paging = req.at_least("2.33")
    max_limit = int(req.services.conf.api.max_limit)
    limit = min(max_limit, int(req.query_value("limit") or max_limit)) if paging else None
    marker = req.query_value("marker") if paging else None
    pattern = req.query_value("hypervisor_hostname_pattern") if req.at_least("2.53") else None
    if pattern is not None:
        if "limit" in req.query or marker:
            raise Invalid(
                "Paging over hypervisors with the hypervisor_hostname_pattern query "
                "parameter is not supported."
            )
        paging = False
        nodes = catalog.search(pattern)
    else:
        nodes = catalog.page(limit, marker)
    with_servers = _with_servers(req)
    items = []
    for node in nodes:
        hyp = catalog.describe(node, with_servers)
        if hyp is not None:
            hyp = _with_uptime(req, catalog, hyp) if detail else hyp
            items.append(views.hypervisor(req, hyp, detail, with_servers))
    return views.collection(req, items, detail, limit if paging else None)


def _with_uptime(req: ApiRequest, catalog: HypervisorCatalog, hyp: Hypervisor) -> Hypervisor:
    """``hyp`` with the uptime the detailed view shows from 2.88."""
    if not req.at_least("2.88"):
        return hyp
    return dataclasses.replace(hyp, uptime=catalog.shown_uptime(hyp, call_context(req.context)))


def list_hypervisors(req: ApiRequest) -> dict[str, Any]:
    """``GET /os-hypervisors``."""
    req.context.can(POLICY % "list", target={})
    return _listing(req, detail=False)


def list_hypervisors_detail(req: ApiRequest) -> dict[str, Any]:
    """``GET /os-hypervisors/detail``."""
    req.context.can(POLICY % "list-detail", target={})
    return _listing(req, detail=True)


def _check_id(req: ApiRequest, hypervisor_id: str) -> None:
    if req.at_least("2.53"):
        if not is_uuid_like(hypervisor_id):
            raise Invalid(f"Invalid uuid {hypervisor_id}")
        return
    try:
        int(hypervisor_id)
    except ValueError:
        raise not_found(hypervisor_id) from None


def show_hypervisor(req: ApiRequest) -> dict[str, Any]:
    """``GET /os-hypervisors/{id}`` (detailed; servers on request from 2.53)."""
    req.context.can(POLICY % "show", target={})
    hypervisor_id = req.params["id"]
    _check_id(req, hypervisor_id)
    catalog = HypervisorCatalog(req.services)
    with_servers = _with_servers(req)
    hyp = catalog.describe(catalog.get(hypervisor_id), with_servers)
    if hyp is None:
        raise not_found(hypervisor_id)
    hyp = _with_uptime(req, catalog, hyp)
    return {"hypervisor": views.hypervisor(req, hyp, True, with_servers)}


def show_uptime(req: ApiRequest) -> dict[str, Any]:
    """``GET /os-hypervisors/{id}/uptime`` (until 2.87)."""
    req.context.can(POLICY % "uptime", target={})
    hypervisor_id = req.params["id"]
    _check_id(req, hypervisor_id)
    catalog = HypervisorCatalog(req.services)
    hyp = catalog.describe(catalog.get(hypervisor_id), False)
    if hyp is None:
        raise not_found(hypervisor_id)
    uptime = catalog.uptime(hyp, call_context(req.context))
    return {"hypervisor": {**views.hypervisor(req, hyp, False), "uptime": uptime}}


def _matching(req: ApiRequest, with_servers: bool) -> dict[str, Any]:
    catalog = HypervisorCatalog(req.services)
    items = []
    for node in catalog.search(req.params["id"]):
        hyp = catalog.describe(node, with_servers, strict=True)
        if hyp is not None:
            items.append(views.hypervisor(req, hyp, False))
    return {"hypervisors": items}


def search_hypervisors(req: ApiRequest) -> dict[str, Any]:
    """``GET /os-hypervisors/{pattern}/search`` (until 2.52)."""
    req.context.can(POLICY % "search", target={})
    return _matching(req, with_servers=False)


def list_hypervisor_servers(req: ApiRequest) -> dict[str, Any]:
    """``GET /os-hypervisors/{pattern}/servers`` (until 2.52)."""
    req.context.can(POLICY % "servers", target={})
    return _matching(req, with_servers=True)


def show_statistics(req: ApiRequest) -> dict[str, Any]:
    """``GET /os-hypervisors/statistics`` (until 2.87)."""
    req.context.can(POLICY % "statistics", target={})
    return {"hypervisor_statistics": HypervisorCatalog(req.services).statistics()}
