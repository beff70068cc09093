"""Neutron's auto-allocated topology (decision 0074): for a project, on its first
``GET /v2.0/auto-allocated-topology/{project}``, a network ``auto_allocated_network`` with a
subnet ``auto_allocated_subnet_v4`` and a router ``auto_allocated_router`` whose gateway is on
the deployment's default external network (``is_default``) and which has an interface on the
subnet; later calls answer the same network. ``DELETE`` removes the three.

Subnet pools are not modelled: the subnet is the first /26 of ``10.128.0.0/16`` no other
auto-allocated subnet holds (what a default pool with that prefix and prefix length 26
gives), so a dry run only needs the default external network. Errors are Neutron's words.
"""

from __future__ import annotations

import ipaddress
from typing import Any

import sqlalchemy as sa

from openkeel.db.network_store import Row
from openkeel.network.embedded.faults import BadRequest, Conflict, NetworkFault
from openkeel.network.embedded.service import Caller, NetworkService

__all__ = ["DRY_RUN", "delete_topology", "get_topology"]

DRY_RUN = "dry-run"
POOL = ipaddress.ip_network("10.128.0.0/16")
PREFIX_LENGTH = 26


class AutoAllocationFailure(Conflict):
    def __init__(self, reason: str) -> None:
        super().__init__(f"Deployment error: {reason}.", "AutoAllocationFailure")


class NotAuthorized(NetworkFault):
    status, kind = 403, "NotAuthorized"


def _project(caller: Caller, project_id: str) -> str:
    """The project asked about (``None``: the caller's), if the caller may ask."""
    if project_id == "None" and caller.project_id is not None:
        project_id = caller.project_id
    if not caller.is_admin and project_id != caller.project_id:
        raise NotAuthorized("Not authorized.")
    return project_id


def _default_external(service: NetworkService) -> str:
    found = service.default_external()
    if found is None:
        raise AutoAllocationFailure("No default router:external network")
    return found


def get_topology(
    service: NetworkService, caller: Caller, project_id: str, fields: list[str]
) -> dict[str, Any]:
    """Neutron's ``auto_allocated_topology`` document: the project's network (made when
    missing) or, for ``fields=dry-run``, whether it could be made."""
    project = _project(caller, project_id)
    if DRY_RUN in fields:
        _default_external(service)
        return {"id": "dry-run=pass", "project_id": project}
    if fields:
        raise BadRequest("Bad auto_allocate request: Unrecognized field.", "BadRequest")
    held = service.store.get("auto_topologies", project)
    if held is None:
        held = _build(service, project, _default_external(service))
    return {"id": held["network_id"], "tenant_id": project, "project_id": project}


def delete_topology(service: NetworkService, caller: Caller, project_id: str) -> None:
    """Remove the project's topology. Neutron shows the resource before deleting it, so no
    topology and no default external network is its 409."""
    project = _project(caller, project_id)
    held = service.store.get("auto_topologies", project)
    if held is None:
        _default_external(service)
        return
    _cleanup(service, str(held["network_id"]), held["router_id"])
    service.store.delete("auto_topologies", project)


def _free_cidr(service: NetworkService) -> str:
    taken = [
        ipaddress.ip_network(s["cidr"])
        for held in service.store.list("auto_topologies")
        for s in service.store.list("subnets", network_id=held["network_id"])
    ]
    for candidate in POOL.subnets(new_prefix=PREFIX_LENGTH):
        if not any(candidate.overlaps(t) for t in taken):
            return str(candidate)
    raise AutoAllocationFailure("Unable to provide project private network")


def _build(service: NetworkService, project: str, external_id: str) -> Row:
    """The network (down until complete), its subnet, the router; then the record. A
    concurrent build for the project that recorded first wins: this one is removed."""
    admin = Caller(project, True)
    own = {"project_id": project}
    try:
        network = service.create_network(
            admin, {"name": "auto_allocated_network", "admin_state_up": False, **own}
        )
        subnet = service.create_subnet(admin, {
            "name": "auto_allocated_subnet_v4", "network_id": network["id"], "ip_version": 4,
            "cidr": _free_cidr(service), **own})  # fmt: skip
    except BadRequest as exc:
        raise AutoAllocationFailure("Unable to provide project private network") from exc
    router: Row | None = None
    try:
        router = service.create_router(admin, {
            "name": "auto_allocated_router", "admin_state_up": True,
            "external_gateway_info": {"network_id": external_id}, **own})  # fmt: skip
        service.add_router_interface(admin, router["id"], {"subnet_id": subnet["id"]})
    except BadRequest as exc:
        _cleanup(service, network["id"], router["id"] if router else None)
        raise AutoAllocationFailure("Unable to provide external connectivity") from exc
    try:
        held = service.store.insert("auto_topologies", {
            "id": project, "network_id": network["id"], "router_id": router["id"]})  # fmt: skip
    except sa.exc.IntegrityError:
        _cleanup(service, network["id"], router["id"])
        found = service.store.get("auto_topologies", project)
        assert found is not None
        return found
    service.update_network(admin, network["id"], {"admin_state_up": True})
    return held


def _cleanup(service: NetworkService, network_id: str, router_id: str | None) -> None:
    """Remove what exists of a topology (a concurrent delete may have removed parts)."""
    admin = Caller(None, True)
    if router_id and service.store.get("routers", router_id) is not None:
        for subnet in service.store.list("subnets", network_id=network_id):
            _ignore_missing(lambda s=subnet: service.remove_router_interface(
                admin, router_id, {"subnet_id": s["id"]}))  # fmt: skip
        _ignore_missing(lambda: service.delete_router(admin, router_id))
    if service.store.get("networks", network_id) is not None:
        _ignore_missing(lambda: service.delete_network(admin, network_id))


def _ignore_missing(call: Any) -> None:
    try:
        call()
    except NetworkFault as exc:
        if exc.status != 404:
            raise
