"""stop_instance, start_instance, reboot_instance (Nova's states and events).

The API sets the task state (powering-off, powering-on, rebooting*) before casting; compute
calls the driver and saves the result with compare-and-swap on that task state. A driver
failure clears the task state and records a fault (Nova's reverts_task_state +
wrap_instance_fault); a failed reboot puts the instance in ERROR as Nova does.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from openkeel.compute import guest, notifying
from openkeel.compute.host import ComputeHost
from openkeel.compute.operations.build import power_state_of
from openkeel.compute.operations.outcome import (
    GONE,
    forget_shelved_image,
    revert_task_state,
    set_error,
)
from openkeel.domain.instances import UNSET, Instance, InstanceNotFound, InstanceUpdate
from openkeel.domain.states import (
    HARD_REBOOT_STATES,
    SOFT_REBOOT_STATES,
    TaskState,
    VmState,
)
from openkeel.rpc.message import CallContext
from openkeel.virt.model import RebootType

LOG = logging.getLogger(__name__)


def _run(
    host: ComputeHost,
    context: CallContext,
    uuid: str,
    event: str,
    body: Callable[[Instance], None],
    on_error: Callable[[ComputeHost, str, BaseException], None] = revert_task_state,
    notify_extra: Mapping[str, Any] | None = None,
) -> None:
    with host.locks.hold(uuid):
        try:
            instance = host.records.get(uuid)
        except InstanceNotFound:
            LOG.info("Instance %s disappeared before %s", uuid, event)
            return
        host.records.event_start(uuid, context.request_id, event, host.host)
        notifying.started(host, context, uuid, event, notify_extra)
        failure: BaseException | None = None
        try:
            body(instance)
        except GONE:
            LOG.info("Instance %s was deleted during %s", uuid, event)
        except Exception as exc:
            LOG.exception("%s of instance %s failed", event, uuid)
            failure = exc
            on_error(host, uuid, exc)
        notifying.finished(host, context, uuid, event, failure, notify_extra)
        host.records.event_finish(uuid, context.request_id, event, failure)


def stop(host: ComputeHost, context: CallContext, uuid: str, clean_shutdown: bool = True) -> None:
    """Power the guest off; vm_state stopped."""

    def body(instance: Instance) -> None:
        host.records.update(
            uuid,
            InstanceUpdate(task_state=TaskState.POWERING_OFF.value),
            expected_task_state=(TaskState.POWERING_OFF.value, None),
        )
        timeout = host.conf.shutdown_timeout if clean_shutdown else 0
        retry = host.conf.compute.shutdown_retry_interval if clean_shutdown else 0
        ref = guest.instance_ref(host.conf, instance)
        host.driver.power_off(ref, timeout, retry)
        host.records.update(
            uuid,
            InstanceUpdate(
                vm_state=VmState.STOPPED.value,
                task_state=None,
                # NOSTATE for a guest that vanished behind our back (Nova's _get_power_state)
                power_state=int(power_state_of(host, instance)),
            ),
            expected_task_state=TaskState.POWERING_OFF.value,
        )

    _run(host, context, uuid, "compute_stop_instance", body)


def start(host: ComputeHost, context: CallContext, uuid: str) -> None:
    """Power the guest on; vm_state active."""

    def body(instance: Instance) -> None:
        host.records.update(
            uuid,
            InstanceUpdate(task_state=TaskState.POWERING_ON.value),
            expected_task_state=(TaskState.POWERING_ON.value, None),
        )
        spec = guest.instance_spec(host.conf, instance)
        host.driver.power_on(spec)
        # a shelved server unshelved in place no longer needs its shelved image (Nova)
        sysmeta = forget_shelved_image(host, context, dict(instance.system_metadata))
        host.records.update(
            uuid,
            InstanceUpdate(
                vm_state=VmState.ACTIVE.value,
                task_state=None,
                power_state=int(host.driver.get_info(spec.ref, use_cache=False).state),
                system_metadata=sysmeta if sysmeta != instance.system_metadata else UNSET,
            ),
            expected_task_state=TaskState.POWERING_ON.value,
        )

    _run(host, context, uuid, "compute_start_instance", body)


def reboot(host: ComputeHost, context: CallContext, uuid: str, reboot_type: str) -> None:
    """SOFT or HARD reboot; vm_state active (Nova's pending → started task states)."""
    hard = reboot_type.upper() == RebootType.HARD.value
    states = HARD_REBOOT_STATES if hard else SOFT_REBOOT_STATES
    pending = TaskState.REBOOT_PENDING_HARD if hard else TaskState.REBOOT_PENDING
    started = TaskState.REBOOT_STARTED_HARD if hard else TaskState.REBOOT_STARTED

    def body(instance: Instance) -> None:
        expected = (*[s.value for s in states], None)
        host.records.update(
            uuid, InstanceUpdate(task_state=pending.value), expected_task_state=expected
        )
        host.records.update(
            uuid, InstanceUpdate(task_state=started.value), expected_task_state=pending.value
        )
        ref = guest.instance_ref(host.conf, instance)
        host.driver.reboot(ref, RebootType.HARD if hard else RebootType.SOFT)
        host.records.update(
            uuid,
            InstanceUpdate(
                vm_state=VmState.ACTIVE.value,
                task_state=None,
                power_state=int(host.driver.get_info(ref, use_cache=False).state),
            ),
            expected_task_state=started.value,
        )

    _run(host, context, uuid, "compute_reboot_instance", body, on_error=set_error)
