"""Waiting for external instance events (Nova's InstanceEvents): an operation that triggers
an action in another service (a port plugged, a volume reimaged) and must not go on before that
service reports back arms its waiters *before* triggering it::

    with host.events.waiting_for(uuid, [("network-vif-plugged", port_id)], timeout=300):
        driver.spawn(...)   # the waiters are armed before the ports are plugged

and leaves the block only when every event arrived (``EventFailed`` when one arrived with
status ``failed``; ``EventTimeout`` when the deadline passed). One ``InstanceEventWaiters``
per compute host (``ComputeHost.events``); events arrive through
openkeel.compute.external_events.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager

from openkeel.domain.errors import ComputeError
from openkeel.rpc.messages.compute import ExternalEvent


class EventTimeout(ComputeError):
    """The awaited events did not all arrive in time."""


class EventFailed(ComputeError):
    """An awaited event arrived with status ``failed``."""


class EventWaiter:
    """One awaited event of one instance; set once, by ``InstanceEventWaiters.deliver``."""

    def __init__(self, instance_uuid: str, key: str) -> None:
        self.instance_uuid = instance_uuid
        self.key = key
        self.event: ExternalEvent | None = None
        self._arrived = threading.Event()

    def set(self, event: ExternalEvent) -> None:
        self.event = event
        self._arrived.set()

    def wait(self, timeout: float) -> ExternalEvent:
        """The event, once arrived; EventTimeout after ``timeout`` seconds."""
        if not self._arrived.wait(max(0.0, timeout)):
            raise EventTimeout(f"Timeout waiting for {self.key} for instance {self.instance_uuid}")  # fmt: skip
        assert self.event is not None
        return self.event


class InstanceEventWaiters:
    """The armed waiters of one compute host, by instance and event key (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting: dict[str, dict[str, EventWaiter]] = {}

    def prepare(self, instance_uuid: str, name: str, tag: str | None = None) -> EventWaiter:
        """Arm a waiter for ``name`` (and ``tag``) of the instance; call before triggering
        what makes the other service send it."""
        key = ExternalEvent(instance_uuid, name, tag=tag).key
        waiter = EventWaiter(instance_uuid, key)
        with self._lock:
            self._waiting.setdefault(instance_uuid, {})[key] = waiter
        return waiter

    def deliver(self, event: ExternalEvent) -> bool:
        """Hand ``event`` to its waiter; False when nobody waits for it."""
        with self._lock:
            armed = self._waiting.get(event.instance_uuid, {})
            waiter = armed.pop(event.key, None)
            if not armed:
                self._waiting.pop(event.instance_uuid, None)
        if waiter is None:
            return False
        waiter.set(event)
        return True

    def cancel(self, instance_uuid: str, names: Collection[str] | None = None) -> None:
        """Drop the instance's waiters (it is going away), releasing each as failed; with
        ``names``, only the waiters of those events."""
        with self._lock:
            armed = self._waiting.get(instance_uuid, {})
            dropped = {k: w for k, w in armed.items()
                       if names is None or any(k == n or k.startswith(n + "-") for n in names)}  # fmt: skip
            for key in dropped:
                del armed[key]
            if not armed:
                self._waiting.pop(instance_uuid, None)
        for key, waiter in dropped.items():
            # the key is ``name-tag``; names hold dashes too, so the name is the one asked for
            name = next((n for n in names or () if key == n or key.startswith(n + "-")), key)
            waiter.set(ExternalEvent(instance_uuid, name, "failed", key[len(name) + 1 :] or None))

    def pending(self, instance_uuid: str) -> list[str]:
        """Keys still awaited for the instance."""
        with self._lock:
            return sorted(self._waiting.get(instance_uuid, {}))

    @contextmanager
    def waiting_for(
        self, instance_uuid: str, events: Sequence[tuple[str, str | None]], timeout: float
    ) -> Iterator[list[EventWaiter]]:
        """Arm waiters for ``events`` ((name, tag) pairs), run the block, then wait for all
        of them within ``timeout`` seconds from the end of the block. Waiters left armed
        (the block raised, or a timeout) are withdrawn."""
        waiters = [self.prepare(instance_uuid, name, tag) for name, tag in events]
        try:
            yield waiters
            deadline = time.monotonic() + timeout
            for waiter in waiters:
                event = waiter.wait(deadline - time.monotonic())
                if event.status == "failed":
                    raise EventFailed(f"Event {event.key} for instance {instance_uuid} failed")
        finally:
            self._withdraw(waiters)

    def _withdraw(self, waiters: Sequence[EventWaiter]) -> None:
        with self._lock:
            for waiter in waiters:
                armed = self._waiting.get(waiter.instance_uuid, {})
                if armed.get(waiter.key) is waiter:
                    del armed[waiter.key]
                if not armed:
                    self._waiting.pop(waiter.instance_uuid, None)
