"""soft_delete_instance and restore_instance (``[DEFAULT] reclaim_instance_interval`` > 0).

A soft-deleted server keeps its guest (powered off), its allocations and its quota until the
reclaim periodic task deletes it; restore powers it back on. Same shape as power.py: the API
sets the task state, compute finishes it with compare-and-swap.
"""

from __future__ import annotations

from openkeel.compute import guest
from openkeel.compute.host import ComputeHost
from openkeel.compute.operations.power import _run
from openkeel.domain.instances import Instance, InstanceUpdate
from openkeel.domain.states import PowerState, TaskState, VmState
from openkeel.rpc.message import CallContext


def soft_delete(host: ComputeHost, context: CallContext, uuid: str) -> None:
    """Power the guest off and mark the server SOFT_DELETED."""

    def body(instance: Instance) -> None:
        ref = guest.instance_ref(host.conf, instance)
        host.driver.power_off(ref, 0, 0)
        host.records.update(
            uuid,
            InstanceUpdate(
                vm_state=VmState.SOFT_DELETED.value,
                task_state=None,
                power_state=int(PowerState.SHUTDOWN),
            ),
            expected_task_state=TaskState.SOFT_DELETING.value,
        )

    _run(host, context, uuid, "compute_soft_delete_instance", body)


def restore(host: ComputeHost, context: CallContext, uuid: str) -> None:
    """Power the guest back on; the server is ACTIVE again."""

    def body(instance: Instance) -> None:
        spec = guest.instance_spec(host.conf, instance)
        host.driver.power_on(spec)
        host.records.update(
            uuid,
            InstanceUpdate(
                vm_state=VmState.ACTIVE.value,
                task_state=None,
                power_state=int(host.driver.get_info(spec.ref, use_cache=False).state),
            ),
            expected_task_state=TaskState.RESTORING.value,
        )

    _run(host, context, uuid, "compute_restore_instance", body)
