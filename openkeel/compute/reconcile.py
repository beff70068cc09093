"""Start-up reconciliation (Nova's init_host/_init_instance), made to always converge.

After a crash, instances of this host may be stuck mid-operation. Each one is resolved to a
stable state: interrupted resizes and migrations are rolled back or set to ERROR
(``move_recovery``); builds (vm_state building or a build task state) → ERROR with a fault and
their guest removed; deleting → the delete is finished; powering-off/on → finished; reboots → a hard
reboot is finished; a move the conductor has not recorded yet (``resize_prep``, ``migrating``
without a migration) is left to it; any other task state is cleared. Then Placement allocations
held on this host's providers by consumers with no live instance are deleted.

``recover_stale_operations`` (a periodic task) applies the same decisions to instances whose
operation nobody runs any more without a restart: a task state or migration unchanged for
``stale_task_timeout`` while no thread of this service holds the instance.
"""

from __future__ import annotations

import datetime
import logging

from openkeel.compute import guest, move_recovery
from openkeel.compute.host import ComputeHost
from openkeel.compute.operations import delete, power
from openkeel.compute.operations.outcome import set_error
from openkeel.compute.periodic_tasks import remove_orphan_allocations
from openkeel.domain.errors import ComputeError
from openkeel.domain.instances import Instance, InstanceUpdate
from openkeel.domain.states import HARD_REBOOT_STATES, SOFT_REBOOT_STATES, TaskState, VmState
from openkeel.rpc.message import CallContext

LOG = logging.getLogger(__name__)

_BUILD_TASKS = frozenset(
    {
        TaskState.SCHEDULING,
        TaskState.NETWORKING,
        TaskState.BLOCK_DEVICE_MAPPING,
        TaskState.SPAWNING,
    }
)


class InterruptedByRestart(ComputeError):
    """Fault of an operation the compute service's restart interrupted."""

    def __init__(self, vm_state: str | None, task_state: str | None) -> None:
        super().__init__(
            f"Instance was in vm_state {vm_state}, task_state {task_state} "
            "when the compute service restarted."
        )


# A move the API accepted whose migration the conductor has not recorded yet: the conductor
# owns the instance until it casts to a compute host (it records the migration, moves the
# allocations, asks the scheduler). Clearing the task state at start-up (Nova does) lets the
# user start a second move while the first one's conductor is still at work: two migrations
# then move the same consumer's allocations and the server ends with a flavor its allocation
# does not match (seen in tests/faults). At start-up such an instance is left to its conductor
# when one can still be at work (another process, over RabbitMQ); the stale-operation task
# settles it after ``stale_task_timeout`` if nothing comes.
_CONDUCTOR_MOVE_TASKS = frozenset({TaskState.RESIZE_PREP, TaskState.MIGRATING})


def init_instances(host: ComputeHost) -> None:
    """Settle interrupted moves, resolve every instance of this host, then drop orphan
    allocations (the settled moves' consumers among them)."""
    settled = set(move_recovery.recover_moves(host))
    for instance in host.records.on_host(host.host):
        if instance.uuid in settled:
            continue  # its move's recovery settled it (or cast its last step)
        if instance.task_state in _CONDUCTOR_MOVE_TASKS and _conductor_may_be_at_work(host):
            LOG.warning(
                "Instance %s is in task state %s at start-up with no move recorded here: left "
                "to its conductor (settled after stale_task_timeout if nothing comes)",
                instance.uuid,
                instance.task_state,
            )
            continue
        try:
            init_instance(host, instance)
        except Exception:
            LOG.exception("Could not reconcile instance %s", instance.uuid)
    remove_orphan_allocations(host)


def _conductor_may_be_at_work(host: ComputeHost) -> bool:
    """Whether a conductor elsewhere may still hold a move this host does not know: the casts
    outlive this process (RabbitMQ; in process, they went with it) and the stale-operation task
    is on to settle the move if none does."""
    return bool(host.conf.stale_task_timeout) and host.conductor.rpc.transport.durable


def init_instance(host: ComputeHost, instance: Instance) -> None:
    """Bring one instance to a stable state."""
    context = CallContext(roles=("admin",))
    task = instance.task_state
    uuid = instance.uuid
    if instance.vm_state == VmState.BUILDING or task in _BUILD_TASKS:
        LOG.warning("Instance %s was building when compute stopped: ERROR", uuid)
        _destroy_guest(host, instance)
        set_error(host, uuid, InterruptedByRestart(instance.vm_state, task))
    elif task in (TaskState.DELETING, TaskState.SOFT_DELETING) or (
        instance.vm_state == VmState.DELETED
    ):
        delete.terminate(host, context, uuid)
    elif task == TaskState.POWERING_OFF:
        power.stop(host, context, uuid, clean_shutdown=False)
    elif task == TaskState.POWERING_ON:
        power.start(host, context, uuid)
    elif move_recovery.is_reverting(instance):
        move_recovery.resume_revert(host, instance)
    elif task in SOFT_REBOOT_STATES or task in HARD_REBOOT_STATES:
        host.records.update(uuid, InstanceUpdate(task_state=TaskState.REBOOTING_HARD.value))
        power.reboot(host, context, uuid, "HARD")
    elif task is not None:
        LOG.warning("Clearing task state %s of instance %s after restart", task, uuid)
        host.records.update(uuid, InstanceUpdate(task_state=None))


def _destroy_guest(host: ComputeHost, instance: Instance) -> None:
    try:
        host.driver.destroy(guest.instance_ref(host.conf, instance))
        host.network.deallocate_for_instance(host.net_ref(instance.uuid, instance.project_id))
        host.records.update(instance.uuid, InstanceUpdate(network_info=[]))
    except Exception:
        LOG.exception("Could not clean up the interrupted build of %s", instance.uuid)


def recover_stale_operations(host: ComputeHost) -> list[str]:
    """Settle operations nobody runs any more, as a restart would (``stale_task_timeout``).

    An instance of this host whose task state (or in-progress migration) has not changed for
    the timeout and whose lock no thread of this service holds lost its operation: the cast
    vanished with a broker restart, or the conductor died mid-move. Returns the uuids settled.
    """
    timeout = host.conf.stale_task_timeout
    if not timeout:
        return []
    cutoff = host.clock.now() - datetime.timedelta(seconds=timeout)
    settled = move_recovery.recover_moves(host, updated_before=cutoff)
    for instance in host.records.on_host(host.host):
        stamp = instance.updated_at or instance.created_at
        if instance.task_state is None or stamp is None or stamp >= cutoff:
            continue
        with host.locks.try_hold(instance.uuid) as idle:
            if not idle:
                continue  # an operation is running: it owns the instance
            current = host.records.get(instance.uuid)
            if (current.task_state, current.updated_at) != (
                instance.task_state,
                instance.updated_at,
            ):
                continue
            LOG.warning(
                "Instance %s has been in task state %s since %s with no operation running: "
                "settling it",
                instance.uuid,
                instance.task_state,
                stamp,
            )
            init_instance(host, current)
            settled.append(instance.uuid)
    return settled
