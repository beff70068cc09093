"""Lifecycle events from the virt driver -> power state sync (Nova's handle_lifecycle_event).

A driver that sees its guests change by themselves (the KubeVirt driver's VMI watch: a guest
powered off, crashed, a VM deleted behind our back, a node lost) emits a LifecycleEvent. The
compute host turns it into the power state the event implies and runs the same decision as the
periodic sync (periodic_tasks.sync_instance_power_state), on the power state the driver reports
when the event is handled (so a late event is harmless): record it, and call the stop API for a
server that should run but does not. As in Nova, a server with a task in
progress or on another host is left alone (the operation, or that host, owns it).

Events arrive on the driver's thread; they are queued and handled on a thread of their own, so
the driver's watch never waits for the database or an RPC. Started and stopped by
ComputeService. ``ADDRESSES_CHANGED`` (the hypervisor's network gave the guest new addresses)
goes to guest_addresses.AddressSync.
"""

from __future__ import annotations

import logging
import queue
import threading

from openkeel.compute import periodic_tasks
from openkeel.compute.guest_addresses import AddressSync
from openkeel.compute.host import ComputeHost
from openkeel.compute.operations.build import power_state_of
from openkeel.domain.instances import InstanceNotFound
from openkeel.domain.states import PowerState
from openkeel.virt.model import LifecycleEvent, LifecycleTransition

LOG = logging.getLogger(__name__)

T = LifecycleTransition
# What each event says the power state now is (Nova's handle_lifecycle_event). The migration
# events belong to the live migration in progress, which records its own outcome.
POWER_STATE_OF = {
    T.STARTED: PowerState.RUNNING,
    T.STOPPED: PowerState.SHUTDOWN,
    T.PAUSED: PowerState.PAUSED,
    T.RESUMED: PowerState.RUNNING,
    T.SUSPENDED: PowerState.SUSPENDED,
}


class LifecycleHandler:
    """The driver's event listener for one compute host."""

    def __init__(self, host: ComputeHost) -> None:
        self.host = host
        self._events: queue.SimpleQueue[LifecycleEvent | None] = queue.SimpleQueue()
        self._thread = threading.Thread(
            target=self._run, name=f"lifecycle-{host.host}", daemon=True
        )
        self.handled = 0
        self.addresses = AddressSync(host)

    def start(self) -> LifecycleHandler:
        self._thread.start()
        self.host.driver.register_event_listener(self)
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Stop listening, finish the events already queued, join the thread."""
        self.host.driver.register_event_listener(None)
        if self._thread.is_alive():
            self._events.put(None)
            self._thread.join(timeout)
        self.addresses.stop(timeout)

    def __call__(self, event: LifecycleEvent) -> None:
        self._events.put(event)

    def _run(self) -> None:
        while (event := self._events.get()) is not None:
            try:
                self.handle(event)
            except Exception:  # one bad event must not end the handling of the others
                LOG.exception("Lifecycle event %s of %s failed", event.transition.title, event.instance_uuid)  # fmt: skip
            self.handled += 1

    def handle(self, event: LifecycleEvent) -> None:
        if event.transition is T.ADDRESSES_CHANGED:
            self.addresses.request(event.instance_uuid)
            return
        state = POWER_STATE_OF.get(event.transition)
        if state is None:
            return
        uuid = event.instance_uuid
        # Under the instance's lock (see periodic_tasks.sync_power_states); an operation that
        # holds it owns the instance's state, so the event is skipped as one seen mid-task.
        with self.host.locks.try_hold(uuid) as held:
            if not held:
                LOG.info("Lifecycle event %s of %s: an operation holds the instance, skipped", event.transition.title, uuid)  # fmt: skip
                return
            self._handle_locked(event, state)

    def _handle_locked(self, event: LifecycleEvent, state: PowerState) -> None:
        uuid = event.instance_uuid
        try:
            instance = self.host.records.get(uuid)
        except InstanceNotFound:
            return
        if instance.host != self.host.host:
            LOG.debug("Lifecycle event %s of %s: the server is on %s, not here", event.transition.title, uuid, instance.host)  # fmt: skip
            return
        if instance.task_state is not None:
            LOG.info("Lifecycle event %s of %s: task %s in progress, skipped", event.transition.title, uuid, instance.task_state)  # fmt: skip
            return
        # The event says what happened; the driver says what is true now. Deciding on the
        # current state means a late event (the guest of a rebuild, stopped and started
        # again before this runs) never undoes newer work.
        current = power_state_of(self.host, instance)
        LOG.info("Lifecycle event %s of %s (VM %s, now %s)", event.transition.title, uuid, state.name.lower(), current.name.lower())  # fmt: skip
        periodic_tasks.sync_instance_power_state(self.host, instance, current)
