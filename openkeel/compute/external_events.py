"""External instance events on the compute host (Nova's external_instance_event): what other
services report about an instance (a port plugged, a volume extended, a bare-metal power
change).

Called by the compute endpoint (the API casts ``ExternalInstanceEvent`` to the instance's
host). ``power-update`` is acted on here: the guest's power state is read from the driver and
recorded; ``network-changed`` refreshes the network info, ``network-vif-deleted`` unplugs the
port, ``volume-extended`` tells the driver the attached volume's new size. Every other event
(``network-vif-plugged``, ``volume-reimaged`` a volume-backed rebuild waits for, ...) goes to the operation waiting for it
(openkeel.compute.event_waiters, ``ComputeHost.events``); one that nothing waits for is logged
and dropped, as in Nova.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from openkeel.compute import guest
from openkeel.compute.host import ComputeHost
from openkeel.compute.operations import volume_changes
from openkeel.compute.operations.build import power_state_of
from openkeel.domain.errors import ComputeError
from openkeel.domain.instances import InstanceNotFound, InstanceUpdate
from openkeel.domain.states import PowerState, TaskState, VmState
from openkeel.rpc.message import CallContext
from openkeel.rpc.messages.compute import ExternalEvent

LOG = logging.getLogger(__name__)

POWER_ON, POWER_OFF = "POWER_ON", "POWER_OFF"
# The vm_state a guest's reported power state means (anything else: stopped).
_VM_STATES = {
    PowerState.RUNNING: VmState.ACTIVE,
    PowerState.PAUSED: VmState.PAUSED,
    PowerState.SUSPENDED: VmState.SUSPENDED,
}


def handle(host: ComputeHost, context: CallContext, events: Sequence[ExternalEvent]) -> None:
    """Process events for instances of this host, in order; never raises for one event."""
    for event in events:
        LOG.debug("Received event %s for instance %s", event.key, event.instance_uuid)
        try:
            if event.name == "power-update":
                power_update(host, event.instance_uuid, event.tag)
            elif event.name == "network-changed":
                refresh_network_info(host, event.instance_uuid)
            elif event.name == "network-vif-deleted" and event.tag:
                vif_deleted(host, event.instance_uuid, event.tag)
            elif event.name == "volume-extended" and event.tag:
                volume_changes.extend_volume(host, context, event.instance_uuid, event.tag)
            elif not host.events.deliver(event):
                LOG.info("Received event %s for instance %s that nothing waits for",
                         event.key, event.instance_uuid)  # fmt: skip
        except InstanceNotFound:
            LOG.info("Event %s for instance %s: the instance is gone", event.key, event.instance_uuid)  # fmt: skip
        except Exception:
            LOG.exception("Event %s for instance %s failed", event.key, event.instance_uuid)


def refresh_network_info(host: ComputeHost, uuid: str) -> None:
    """``network-changed`` (a port's addresses or floating IPs changed in the network
    service): the instance's network info is read again, as Nova refreshes its cache."""
    with host.locks.hold(uuid):
        inst = host.records.get(uuid)
        ref = host.net_ref(uuid, inst.project_id)
        host.records.update(
            uuid, InstanceUpdate(network_info=host.network.get_instance_nw_info(ref))
        )


def vif_deleted(host: ComputeHost, uuid: str, port_id: str) -> None:
    """``network-vif-deleted`` (someone deleted a port of the instance): unplug it from the
    guest and drop it from the network info, as Nova does."""
    with host.locks.hold(uuid):
        inst = host.records.get(uuid)
        try:
            host.driver.detach_interface(guest.instance_ref(host.conf, inst), port_id)
        except Exception:
            LOG.exception("Detaching the deleted port %s from %s failed", port_id, uuid)
        ref = host.net_ref(uuid, inst.project_id)
        host.records.update(
            uuid, InstanceUpdate(network_info=host.network.get_instance_nw_info(ref))
        )


def power_update(host: ComputeHost, uuid: str, target: str | None) -> None:
    """A power change reported from outside (Nova 2.76): in the states Nova accepts it in
    (idle; stopped and shut down for POWER_ON, active and running for POWER_OFF), mark the
    instance powering on/off, read the guest's power state from the driver and record it
    with the matching vm_state; otherwise a logged no-op."""
    with host.locks.hold(uuid):
        inst = host.records.get(uuid)
        powering_on = target == POWER_ON
        expected = (VmState.STOPPED, PowerState.SHUTDOWN) if powering_on else (VmState.ACTIVE, PowerState.RUNNING)  # fmt: skip
        if (
            target not in (POWER_ON, POWER_OFF)
            or inst.task_state is not None
            or (inst.vm_state, inst.power_state) != (expected[0].value, int(expected[1]))
        ):
            LOG.info("The power-update %s event for instance %s is a no-op (vm_state %s, "
                     "task_state %s, power_state %s)", target, uuid, inst.vm_state,
                     inst.task_state, inst.power_state)  # fmt: skip
            return
        task = TaskState.POWERING_ON if powering_on else TaskState.POWERING_OFF
        try:
            changes = InstanceUpdate(task_state=task.value)
            if not powering_on:
                changes = InstanceUpdate(task_state=task.value, progress=0)
            host.records.apply(uuid, changes, expected_task_state=[None])
        except ComputeError as exc:
            LOG.info("The power-update event was preempted: %s", exc)
            return
        actual = power_state_of(host, inst)
        vm_state = _VM_STATES.get(actual, VmState.STOPPED)
        host.records.apply(
            uuid,
            InstanceUpdate(power_state=int(actual), vm_state=vm_state.value, task_state=None),
            expected_task_state=[task.value],
        )
