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

``sweep_builds_on_dead_hosts`` settles builds handed to a compute host that then went away for
good (no heartbeat for the whole timeout): that host's own restart reconciliation would set them
to ERROR, but it never restarts. They go to ERROR with a fault naming the host; their claim stays
with them (they are still on that host) until the user deletes them.

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
from openkeel.db.repositories import build_requests, instance_mappings, instances, server_extras
from openkeel.domain.errors import ComputeError
from openkeel.domain.instances import InstanceNotFound, InstanceUpdate, InstanceUpdateConflict
from openkeel.domain.states import VmState

LOG = logging.getLogger(__name__)

# A conductor creates the cell row a moment before it hands the build over; rows younger than
# this are left to it.
UNMAPPED_GRACE = datetime.timedelta(seconds=60)
# Rows a sweep may find without a server: a build nobody owns (building, ERROR), and a row
# whose removal was cut short before its soft delete (DELETED but live).
_SETTLED_STATES = (VmState.BUILDING.value, VmState.ERROR.value, VmState.DELETED.value)


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
        deps.bury_in_cell0(request.instance, BuildInterrupted(), request.block_device_mappings)
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


class HostLost(ComputeError):
    """Fault of a build whose compute host stopped reporting and never came back."""

    def __init__(self, host: str) -> None:
        super().__init__(
            f"The compute host {host} stopped reporting while it was building the instance and "
            "has not come back. Set to error state; delete the server and create it again."
        )


def sweep_builds_on_dead_hosts(deps: ConductorDeps, silent_since: datetime.datetime) -> int:
    """ERROR for builds unchanged since ``silent_since`` on hosts whose compute service has
    not reported since then either (or has no service row, or is forced down)."""
    settled = 0
    for cell_uuid in deps.cell_uuids():
        if cell_uuid == CELL0_UUID:
            continue
        with reader(deps.cells[cell_uuid]).connect() as conn:
            building = instances.building_on_hosts(conn, silent_since)
            if not building:
                continue
            services = server_extras.compute_services_by_host(conn, {h for _u, h in building})
        for uuid, host in building:
            row = services.get(host)
            heartbeat = None if row is None else (row["last_seen_up"] or row["updated_at"])
            if (
                row is not None
                and not row["forced_down"]
                and heartbeat is not None
                and heartbeat >= silent_since
            ):
                continue  # the host is alive: its build is slow, or it settles it itself
            records = deps.records(cell_uuid)
            try:
                changes = InstanceUpdate(vm_state=VmState.ERROR.value, task_state=None)
                records.update(uuid, changes, expected_vm_state=VmState.BUILDING.value)
                records.add_fault(uuid, HostLost(host), host)
            except (InstanceNotFound, InstanceUpdateConflict):
                continue  # deleted, or the host came back and moved it on
            LOG.warning("Build of %s on %s, which stopped reporting: ERROR", uuid, host)
            settled += 1
    return settled


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
    "HostLost",
    "settle_build_request",
    "sweep_build_requests",
    "sweep_builds_on_dead_hosts",
    "sweep_unmapped_instances",
]
