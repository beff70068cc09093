"""Find one server by uuid: instance mapping -> cell DB row, or the build request while it is
not scheduled yet; 404 "Instance <id> could not be found." otherwise (other projects' servers
are invisible to non-admins, as Nova's project-only reads).

Called by the show, update, delete and action use cases.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa

from openkeel.api.caches import InstanceLocation, InstanceLocations
from openkeel.api.context import RequestContext
from openkeel.api.services import ApiServices
from openkeel.db.readers import Readers
from openkeel.db.repositories import build_requests, instance_mappings, instances, request_specs
from openkeel.db.repositories.instance_rows import VIEW_RELATIONS
from openkeel.domain.instances import Instance, InstanceNotFound


@dataclass(frozen=True)
class FoundServer:
    """A server and where it lives (``cell_uuid`` None: only its build request exists;
    ``down``: its cell could not be read and ``instance`` holds what the API DB knows)."""

    instance: Instance
    cell_uuid: str | None
    down: bool = False


def _from_down_cell(
    services: ApiServices, server_id: str, location: InstanceLocation, readers: Readers
) -> FoundServer:
    spec = request_specs.get(readers.conn(services.api_db), server_id)
    image_id = spec.image.get("id") if spec.image else None
    inst = Instance(
        uuid=server_id,
        project_id=location.project_id,
        user_id=location.user_id or "",
        flavor=spec.flavor,
        image_ref=image_id or "",
        availability_zone=spec.availability_zone,
        power_state=0,
        created_at=location.created_at,
    )
    return FoundServer(inst, location.cell_uuid, down=True)


def _locate(
    services: ApiServices, server_id: str, readers: Readers
) -> InstanceLocation | FoundServer:
    """Where the instance lives (kept once placed), or the still unscheduled build request."""
    locations: InstanceLocations = services.caches.locations
    known = locations.get(server_id)
    if known is not None:
        return known
    api = readers.conn(services.api_db)
    try:
        mapping = instance_mappings.get(api, server_id)
    except InstanceNotFound:
        raise InstanceNotFound(server_id) from None
    if mapping.cell_uuid is None:
        request = build_requests.find(api, server_id)
        if request is not None:
            return FoundServer(request.instance, None)
        # Scheduled between the two reads (a database that reads committed rows statement by
        # statement, PostgreSQL's default): the conductor put the instance in its cell, then
        # deleted the build request. Nova reads the mapping again, too.
        mapping = instance_mappings.get(api, server_id)
        if mapping.cell_uuid is None:
            raise InstanceNotFound(server_id)
    location = InstanceLocation(
        mapping.cell_uuid, mapping.project_id, mapping.user_id, mapping.created_at
    )
    locations.keep(server_id, location)
    return location


def find_server(
    services: ApiServices,
    context: RequestContext,
    server_id: str,
    *,
    down_ok: bool = False,
    readers: Readers | None = None,
) -> FoundServer:
    """The visible server ``server_id`` (raises InstanceNotFound -> 404).

    ``down_ok`` (2.69): a server of an unreachable cell is answered from the API DB.
    ``readers``: the request's reader connections (default: this call's own).
    """
    if readers is None:
        with Readers() as own:
            return find_server(services, context, server_id, down_ok=down_ok, readers=own)
    located = _locate(services, server_id, readers)
    if isinstance(located, FoundServer):
        found = located
    else:
        engine = (services.cell_dbs or {}).get(located.cell_uuid)
        if engine is None:
            raise InstanceNotFound(server_id)
        try:
            instance = instances.get(readers.conn(engine), server_id, relations=VIEW_RELATIONS)
            found = FoundServer(instance, located.cell_uuid)
        except sa.exc.OperationalError:
            readers.forget(engine)
            if not down_ok:
                raise
            found = _from_down_cell(services, server_id, located, readers)
    if not context.is_admin and found.instance.project_id != context.project_id:
        raise InstanceNotFound(server_id)
    return found


def find_allowed(
    services: ApiServices, context: RequestContext, server_id: str, rule: str
) -> FoundServer:
    """The visible server ``server_id`` once ``rule`` allows the caller on its project (the
    sub-resource use cases' first step; an invisible server is a 404 before any policy)."""
    found = find_server(services, context, server_id)
    context.can(rule, {"project_id": found.instance.project_id})
    return found
