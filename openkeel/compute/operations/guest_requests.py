"""set_admin_password and trigger_crash_dump: requests the guest itself acts on (Nova's
ComputeManager methods of the same names).

set_admin_password is a call: the API waits, and its errors travel back as the answers Nova
gives (409 for a guest that is not running, has no agent, refuses or fails; 501 for a driver
without the feature), after the task ``updating_password`` is cleared and the fault recorded.
trigger_crash_dump is a cast that changes no state: a driver or guest that cannot take an NMI
leaves an Error event and a fault.
"""

from __future__ import annotations

import logging

from openkeel.compute import guest, notifying
from openkeel.compute.host import ComputeHost
from openkeel.compute.operations.build import power_state_of
from openkeel.compute.operations.outcome import GONE
from openkeel.compute.operations.power import _run
from openkeel.domain.errors import ComputeError, Conflict, Invalid, NotImplementedYet
from openkeel.domain.instances import (
    Instance,
    InstanceNotFound,
    InstanceUpdate,
    InstanceUpdateConflict,
)
from openkeel.domain.states import PowerState, TaskState
from openkeel.rpc.message import CallContext
from openkeel.virt import errors as virt_errors

LOG = logging.getLogger(__name__)
EVENT_PASSWORD = "compute_set_admin_password"


class PasswordSetFailed(Conflict):
    """Nova's InstancePasswordSetFailed (409 from the API)."""

    def __init__(self, uuid: str, reason: str) -> None:
        super().__init__(f"Failed to set admin password on {uuid} because {reason}")


def _answer(uuid: str, exc: BaseException) -> ComputeError:
    """What the API answers for a driver failure (Nova's translations)."""
    if isinstance(exc, virt_errors.GuestAgentNotEnabled):
        return Conflict("Guest agent is not enabled for the instance")
    if isinstance(exc, virt_errors.AdminPasswordNotSupported):
        return Conflict("Set admin password is not supported")
    if isinstance(exc, virt_errors.NotSupported):
        return NotImplementedYet("Unable to set password on instance")
    # never the driver's text: it could show the password to the caller
    return PasswordSetFailed(uuid, "error setting admin password")


def set_admin_password(host: ComputeHost, context: CallContext, uuid: str, new_pass: str) -> None:
    """Set the guest's administrator password; raises the error the API answers with."""
    with host.locks.hold(uuid):
        try:
            instance = host.records.get(uuid)
        except InstanceNotFound:
            LOG.info("Instance %s disappeared before set_admin_password", uuid)
            raise
        host.records.event_start(uuid, context.request_id, EVENT_PASSWORD, host.host)
        notifying.started(host, context, uuid, EVENT_PASSWORD)
        failure: ComputeError | None = None
        try:
            _set(host, instance, new_pass)
        except GONE:
            LOG.info("Instance %s was deleted during set_admin_password", uuid)
            raise
        except ComputeError as exc:
            failure = exc
        except Exception as exc:
            LOG.exception("set_admin_password of instance %s failed", uuid)
            failure = _answer(uuid, exc)
        if failure is not None:
            try:
                host.records.add_fault(uuid, failure, host.host)
                host.records.apply(
                    uuid,
                    InstanceUpdate(task_state=None),
                    expected_task_state=TaskState.UPDATING_PASSWORD.value,
                )
            except GONE:
                LOG.info("Instance %s was deleted during set_admin_password", uuid)
            except InstanceUpdateConflict as exc:  # another operation owns the task now
                LOG.info("Task of %s not reverted after set_admin_password: %s", uuid, exc)
        notifying.finished(host, context, uuid, EVENT_PASSWORD, failure)
        host.records.event_finish(uuid, context.request_id, EVENT_PASSWORD, failure)
        if failure is not None:
            raise failure


def _set(host: ComputeHost, instance: Instance, new_pass: str) -> None:
    if power_state_of(host, instance) != PowerState.RUNNING:
        raise PasswordSetFailed(instance.uuid, f"instance {instance.uuid} is not running")
    host.driver.set_admin_password(guest.instance_ref(host.conf, instance), new_pass)
    LOG.info("Admin password set for %s", instance.uuid)
    host.records.apply(
        instance.uuid,
        InstanceUpdate(task_state=None),
        expected_task_state=TaskState.UPDATING_PASSWORD.value,
    )


def trigger_crash_dump(host: ComputeHost, context: CallContext, uuid: str) -> None:
    """Inject an NMI; no state changes (what the guest does depends on its configuration)."""

    def body(instance: Instance) -> None:
        host.driver.trigger_crash_dump(guest.instance_ref(host.conf, instance))

    def on_error(host: ComputeHost, uuid: str, exc: BaseException) -> None:
        try:
            host.records.add_fault(uuid, _crash_dump_fault(exc), host.host)
        except InstanceNotFound:
            LOG.info("Instance %s disappeared during trigger_crash_dump", uuid)

    _run(host, context, uuid, "compute_trigger_crash_dump", body, on_error)


def _crash_dump_fault(exc: BaseException) -> BaseException:
    if isinstance(exc, virt_errors.NotSupported):
        # Nova's TriggerCrashDumpNotSupported (the guest cannot take an NMI here)
        return Invalid("Triggering crash dump is not supported")
    return exc
