"""pause_instance, unpause_instance, suspend_instance, resume_instance and inject_network_info
(Nova's states and ``compute_<method>`` events).

The API sets the task state (pausing, unpausing, suspending, resuming) before casting; compute
calls the driver and saves the new vm_state and power state with compare-and-swap on that task
state. A failed pause/unpause clears the task state and records a fault; a failed suspend or
resume puts the instance in ERROR, except when the driver lacks the feature (then the vm_state
stays as it was), as Nova's ``_error_out_instance_on_exception`` does.
"""

from __future__ import annotations

import logging

from openkeel.compute import guest
from openkeel.compute.host import ComputeHost
from openkeel.compute.operations.outcome import revert_task_state, set_error
from openkeel.compute.operations.power import _run
from openkeel.domain.instances import Instance, InstanceNotFound, InstanceUpdate
from openkeel.domain.states import TaskState, VmState
from openkeel.rpc.message import CallContext
from openkeel.virt.errors import NotSupported

LOG = logging.getLogger(__name__)
OLD_VM_STATE = "old_vm_state"


def _settle(
    host: ComputeHost, instance: Instance, changes: InstanceUpdate, task: TaskState
) -> None:
    """Save the outcome (with the guest's power state) if the task is still ``task``."""
    ref = guest.instance_ref(host.conf, instance)
    power = int(host.driver.get_info(ref, use_cache=False).state)
    full = InstanceUpdate(
        vm_state=changes.vm_state,
        task_state=None,
        power_state=power,
        system_metadata=changes.system_metadata,
    )
    host.records.update(instance.uuid, full, expected_task_state=task.value)


def _error_unless_unsupported(host: ComputeHost, uuid: str, exc: BaseException) -> None:
    if isinstance(exc, NotSupported):
        revert_task_state(host, uuid, exc)
    else:
        set_error(host, uuid, exc)


def pause(host: ComputeHost, context: CallContext, uuid: str) -> None:
    """Freeze the guest in memory; vm_state paused."""

    def body(instance: Instance) -> None:
        host.driver.pause(guest.instance_ref(host.conf, instance))
        changes = InstanceUpdate(vm_state=VmState.PAUSED.value)
        _settle(host, instance, changes, TaskState.PAUSING)

    _run(host, context, uuid, "compute_pause_instance", body)


def unpause(host: ComputeHost, context: CallContext, uuid: str) -> None:
    """Continue a paused guest; vm_state active."""

    def body(instance: Instance) -> None:
        host.driver.unpause(guest.instance_ref(host.conf, instance))
        changes = InstanceUpdate(vm_state=VmState.ACTIVE.value)
        _settle(host, instance, changes, TaskState.UNPAUSING)

    _run(host, context, uuid, "compute_unpause_instance", body)


def suspend(host: ComputeHost, context: CallContext, uuid: str) -> None:
    """Save the guest's memory and stop it; vm_state suspended (the old one remembered)."""

    def body(instance: Instance) -> None:
        host.driver.suspend(guest.instance_ref(host.conf, instance))
        sysmeta = {**instance.system_metadata, OLD_VM_STATE: instance.vm_state or "active"}
        changes = InstanceUpdate(vm_state=VmState.SUSPENDED.value, system_metadata=sysmeta)
        _settle(host, instance, changes, TaskState.SUSPENDING)

    _run(host, context, uuid, "compute_suspend_instance", body, _error_unless_unsupported)


def resume(host: ComputeHost, context: CallContext, uuid: str) -> None:
    """Restore a suspended guest; vm_state back to what it was before suspend (active)."""

    def body(instance: Instance) -> None:
        host.driver.resume(guest.instance_spec(host.conf, instance))
        sysmeta = dict(instance.system_metadata)
        previous = sysmeta.pop(OLD_VM_STATE, VmState.ACTIVE.value)
        changes = InstanceUpdate(vm_state=previous, system_metadata=sysmeta)
        _settle(host, instance, changes, TaskState.RESUMING)

    _run(host, context, uuid, "compute_resume_instance", body, _error_unless_unsupported)


def inject_network_info(host: ComputeHost, context: CallContext, uuid: str) -> None:
    """The virt drivers have no guest agent to push network info to: log it and return.

    Nova records no instance action or event for this call either.
    """
    try:
        host.records.get(uuid)
    except InstanceNotFound:
        LOG.info("Instance %s disappeared before inject_network_info", uuid)
        return
    LOG.debug("inject_network_info for %s (request %s): nothing to do", uuid, context.request_id)
