"""Shared endings of operations: put an instance in ERROR with a fault, revert a task state,
free the instance's Placement allocations, bind its ports where it now lives. Used by every module of openkeel.compute.operations.
"""

from __future__ import annotations

import dataclasses
import logging

from openkeel.clients.image import Caller, ImageError, ImageNotFound
from openkeel.clients.placement_errors import PlacementError
from openkeel.compute import port_resources
from openkeel.compute.host import ComputeHost
from openkeel.domain.instances import (
    Instance,
    InstanceNotFound,
    InstanceUpdate,
    UnexpectedDeletingTaskStateError,
)
from openkeel.domain.states import VmState
from openkeel.rpc.message import CallContext

LOG = logging.getLogger(__name__)

# The instance is gone, or a delete took it over mid-operation: not a failure to report (the
# delete owns it now; reverting its task state would undo the delete's).
GONE = (InstanceNotFound, UnexpectedDeletingTaskStateError)


def bind_ports(
    host: ComputeHost, uuid: str, project_id: str, here: bool = True, consumer: str | None = None
) -> Instance:
    """The server's ports bound to this host (``here``) or to none (an offload), as Nova's
    ``setup_networks_on_host`` / ``migrate_instance_finish``; its network info saved. Ports
    with a resource request get the providers of the allocation of ``consumer`` (default the
    server; a revert's is still the migration's) in their binding profile."""
    if here:
        mapping = port_resources.from_allocation(host, uuid, consumer or uuid)
        ref = host.net_ref(uuid, project_id, provider_mapping=mapping)
    else:
        ref = dataclasses.replace(host.net_ref(uuid, project_id), host=None)
    return host.records.update(uuid, InstanceUpdate(network_info=host.network.bind_to_host(ref)))


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


def image_caller(context: CallContext) -> Caller:
    """The image service's caller: the user who asked, with their token (as Nova)."""
    return Caller(context.project_id, "admin" in context.roles, context.auth_token)


# System metadata a shelve leaves for the unshelve (Nova's shelved_* keys).
SHELVED_KEYS = ("shelved_at", "shelved_image_id", "shelved_host")


def forget_shelved_image(host: ComputeHost, context: CallContext, sysmeta: dict[str, str]) -> dict[str, str]:  # fmt: skip
    """Delete the image a shelve made (gone already: fine); ``sysmeta`` without the shelved_*
    keys (Nova's _delete_snapshot_of_shelved_instance + remove_shelved_keys)."""
    image_id = sysmeta.get("shelved_image_id")
    if image_id and host.images is not None:
        try:
            host.images.delete(image_caller(context), image_id)
        except ImageNotFound:
            pass
        except ImageError:
            LOG.warning("Could not delete shelved image %s", image_id, exc_info=True)
    return {k: v for k, v in sysmeta.items() if k not in SHELVED_KEYS}
