"""Settle builds that no role owns any more, so that no server stays in BUILD for good.

A build is owned by whoever holds its build request (API DB): the conductor takes it in
``ConductorDeps.hand_over`` (delete the build request and point the mapping at a cell, in one
transaction), the API takes it when the user deletes the server. A crash between the cast of
``schedule_and_build_instances`` and that hand-over (a killed process, a lost in-process cast,
a step failing on a full disk) leaves a build request nobody will ever take.

``sweep_build_requests`` settles build requests older than a cutoff: if the conductor had
already created the instance in a cell, the build is handed over to that cell and the instance
set to ERROR; otherwise it is buried in cell0 in ERROR, as Nova buries an unschedulable one.
Allocations a scheduler may have claimed are freed either way. Each settlement takes the build
request like the conductor does, so a conductor that was only slow finds it gone and discards
its own row: exactly one of them wins.

``sweep_unmapped_instances`` removes the other leftover of such a crash: a cell row that is
not where its mapping says (the user deleted the server while it was being scheduled and the
conductor died before cleaning up), which lists would otherwise show for good.

Called by ``ConductorService`` at start-up and periodically (docs/decisions/0025).
"""

from __future__ import annotations

import datetime
import logging

from openkeel.conductor.context import ConductorDeps
from openkeel.db.cells import CELL0_UUID
from openkeel.db.engine import reader
from openkeel.db.repositories import build_requests, instance_mappings, instances
from openkeel.domain.errors import ComputeError
from openkeel.domain.instances import InstanceNotFound
from openkeel.domain.states import VmState

LOG = logging.getLogger(__name__)

# A conductor creates the cell row a moment before it hands the build over; rows younger than
# this are left to it.
UNMAPPED_GRACE = datetime.timedelta(seconds=60)
_SETTLED_STATES = (VmState.BUILDING.value, VmState.ERROR.value)


class BuildInterrupted(ComputeError):
    """Fault of a build that no service owned any more."""

    def __init__(self) -> None:
        super().__init__(
            "Build of instance was interrupted before it was scheduled (a service stopped or "
            "failed while handling it). Set to error state; delete the server and create it "
            "again."
        )


def sweep_build_requests(deps: ConductorDeps, created_before: datetime.datetime) -> int:
    """Settle every build request created before ``created_before``; how many were."""
    with reader(deps.api_db).connect() as conn:
        stale = build_requests.created_before(conn, created_before)
    settled = 0
    for request in stale:
        try:
            settled += settle_build_request(deps, request)
        except Exception:
            LOG.exception("Could not settle the orphaned build of %s", request.instance_uuid)
    return settled


def settle_build_request(deps: ConductorDeps, request: build_requests.BuildRequest) -> bool:
    """ERROR for one orphaned build, in the cell it reached or in cell0."""
    uuid = request.instance_uuid
    deps.free_allocations(uuid)
    cell_uuid = _cell_holding(deps, uuid)
    if cell_uuid is None:
        LOG.warning("Build of %s was never scheduled and no service owns it: ERROR in cell0", uuid)
        deps.bury_in_cell0(request.instance, BuildInterrupted())
        return True
    if not deps.hand_over(uuid, cell_uuid):
        return False  # a conductor or the user's delete took it meanwhile
    LOG.warning("Build of %s was interrupted after it reached cell %s: ERROR", uuid, cell_uuid)
    deps.set_error(deps.records(cell_uuid), uuid, BuildInterrupted())
    return True


def _cell_holding(deps: ConductorDeps, uuid: str) -> str | None:
    """The cell (not cell0) where a conductor already created the instance, if any."""
    for cell_uuid in deps.cell_uuids():
        if cell_uuid == CELL0_UUID:
            continue
        try:
            deps.records(cell_uuid).get(uuid)
        except InstanceNotFound:
            continue
        return cell_uuid
    return None


def sweep_unmapped_instances(deps: ConductorDeps, now: datetime.datetime) -> int:
    """Remove building/ERROR cell rows whose mapping is gone or points at another cell."""
    removed = 0
    for cell_uuid in deps.cell_uuids():
        with reader(deps.cells[cell_uuid]).connect() as conn:
            uuids = instances.uuids_in_states(conn, _SETTLED_STATES, now - UNMAPPED_GRACE)
        if not uuids:
            continue
        with reader(deps.api_db).connect() as conn:
            mappings = instance_mappings.get_many(conn, uuids)
        for uuid in uuids:
            mapping = mappings.get(uuid)
            if mapping is not None and mapping.cell_uuid in (None, cell_uuid):
                continue  # placed here, or still being scheduled (the other sweep's case)
            LOG.warning("Instance %s in cell %s belongs to no server: removing it", uuid, cell_uuid)
            deps.discard(deps.records(cell_uuid), uuid)
            removed += 1
    return removed


__all__ = [
    "BuildInterrupted",
    "settle_build_request",
    "sweep_build_requests",
    "sweep_unmapped_instances",
]
