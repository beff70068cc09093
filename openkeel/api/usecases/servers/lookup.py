"""Find one server by uuid: instance mapping -> cell DB row, or the build request while it is
not scheduled yet; 404 "Instance <id> could not be found." otherwise (other projects' servers
are invisible to non-admins, as Nova's project-only reads).

Called by the show, update, delete and action use cases.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from openkeel.api.context import RequestContext
from openkeel.db.repositories import build_requests, instance_mappings, instances
from openkeel.domain.instances import Instance, InstanceNotFound


@dataclass(frozen=True)
class FoundServer:
    """A server and where it lives (``cell_uuid`` None: only its build request exists)."""

    instance: Instance
    cell_uuid: str | None


def find_server(services: Any, context: RequestContext, server_id: str) -> FoundServer:
    """The visible server ``server_id`` (raises InstanceNotFound -> 404)."""
    with services.api_db.connect() as api:
        try:
            mapping = instance_mappings.get(api, server_id)
        except InstanceNotFound:
            raise InstanceNotFound(server_id) from None
        cell_uuid = mapping.cell_uuid
        if cell_uuid is None:
            request = build_requests.find(api, server_id)
            if request is None:
                raise InstanceNotFound(server_id)
            found = FoundServer(request.instance, None)
    if cell_uuid is not None:
        engine = (services.cell_dbs or {}).get(cell_uuid)
        if engine is None:
            raise InstanceNotFound(server_id)
        with engine.connect() as conn:
            found = FoundServer(instances.get(conn, server_id), cell_uuid)
    if not context.is_admin and found.instance.project_id != context.project_id:
        raise InstanceNotFound(server_id)
    return found
