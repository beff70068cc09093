"""Shared endings of operations: put an instance in ERROR with a fault, revert a task state,
free the instance's Placement allocations. Used by every module of openkeel.compute.operations.
"""

from __future__ import annotations

import logging

from openkeel.clients.placement_errors import PlacementError
from openkeel.compute.host import ComputeHost
from openkeel.domain.instances import (
    InstanceNotFound,
    InstanceUpdate,
    UnexpectedDeletingTaskStateError,
)
from openkeel.domain.states import VmState

LOG = logging.getLogger(__name__)

# The instance is gone, or a delete took it over mid-operation: not a failure to report (the
# delete owns it now; reverting its task state would undo the delete's).
GONE = (InstanceNotFound, UnexpectedDeletingTaskStateError)


def set_error(host: ComputeHost, uuid: str, exc: BaseException | None) -> None:
    """vm_state ERROR, no task, and ``exc`` recorded as fault (instance gone: nothing)."""
    # The fault first: a client that sees ERROR (or the task state cleared) finds its fault.
    try:
        if exc is not None:
            host.records.add_fault(uuid, exc, host.host)
        host.records.update(uuid, InstanceUpdate(vm_state=VmState.ERROR.value, task_state=None))
    except InstanceNotFound:
        LOG.info("Instance %s disappeared before it could be set to ERROR", uuid)


def revert_task_state(host: ComputeHost, uuid: str, exc: BaseException) -> None:
    """Clear the task state and record ``exc`` (Nova's reverts_task_state + fault)."""
    try:
        host.records.add_fault(uuid, exc, host.host)
        host.records.update(uuid, InstanceUpdate(task_state=None))
    except InstanceNotFound:
        LOG.info("Instance %s disappeared during the operation", uuid)


def free_allocations(host: ComputeHost, uuid: str) -> None:
    """Delete every allocation of consumer ``uuid`` (no-op if it has none)."""
    try:
        host.placement.delete_allocations(uuid)
    except PlacementError:
        LOG.exception("Could not delete the allocations of %s", uuid)
