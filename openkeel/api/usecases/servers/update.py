"""``PUT /servers/{id}``: rename, describe, re-address and (2.104) re-pin a server.

Called by the servers update handler; a server still in its build request is updated there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from openkeel.api.context import RequestContext
from openkeel.api.services import ApiServices
from openkeel.api.usecases.instance_saves import notify_saved
from openkeel.api.usecases.servers.lookup import FoundServer
from openkeel.db.repositories import build_requests, instances, request_specs
from openkeel.domain.errors import Conflict
from openkeel.domain.instances import UNSET, Instance, InstanceUpdate

_UNSET: Any = UNSET


@dataclass(frozen=True)
class UpdateServer:
    """The changes of a PUT; UNSET fields stay as they are."""

    changes: InstanceUpdate
    pinned_az: Any = _UNSET  # str | None when given (2.104)


def update_server(
    services: ApiServices, context: RequestContext, found: FoundServer, cmd: UpdateServer
) -> Instance:
    """Apply ``cmd``; returns the updated instance."""
    if cmd.pinned_az is not UNSET:
        _repin(services, found, cmd.pinned_az)
    if found.cell_uuid is None:
        updated = found.instance.apply(cmd.changes)
        with services.api_db.begin() as api:
            build_requests.update_instance(api, updated)
        return updated
    with services.cell_dbs[found.cell_uuid].begin() as conn:
        updated = instances.update(conn, found.instance.uuid, cmd.changes)
    notify_saved(services, context, found.instance, updated)
    return updated


def _repin(services: ApiServices, found: FoundServer, requested: str | None) -> None:
    with services.api_db.begin() as api:
        spec = request_specs.get(api, found.instance.uuid)
        current = spec.availability_zone
        if requested is None:
            if current is not None:
                request_specs.save(api, spec.replace(availability_zone=None))
            return
        zone = found.instance.availability_zone
        if current is not None:
            if requested != current:
                raise Conflict(
                    "Cannot change pinned availability zone directly. Unpin first by setting "
                    "pinned_availability_zone to null."
                )
        elif requested != zone:
            raise Conflict(
                f"Server can only be pinned to its current availability zone '{zone}', but "
                f"'{requested}' was requested."
            )
        else:
            request_specs.save(api, spec.replace(availability_zone=requested))
