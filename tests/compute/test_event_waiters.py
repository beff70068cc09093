"""The compute host's waiters for external events: armed before the trigger, released by the
matching event (name and tag), failed events and timeouts raised, nothing left armed."""

from __future__ import annotations

import threading

import pytest

from openkeel.compute.event_waiters import EventFailed, EventTimeout, InstanceEventWaiters
from openkeel.rpc.messages.compute import ExternalEvent

UUID = "0c6a0c1e-0000-4000-8000-000000000001"


def test_an_event_releases_only_its_waiter() -> None:
    waiters = InstanceEventWaiters()
    plugged = waiters.prepare(UUID, "network-vif-plugged", "p1")
    waiters.prepare(UUID, "network-vif-plugged", "p2")
    assert not waiters.deliver(ExternalEvent(UUID, "network-vif-plugged", tag="p3"))
    assert waiters.deliver(ExternalEvent(UUID, "network-vif-plugged", tag="p1"))
    assert plugged.wait(0).key == "network-vif-plugged-p1"
    assert waiters.pending(UUID) == ["network-vif-plugged-p2"]
    # Delivered once: the same event again finds nobody.
    assert not waiters.deliver(ExternalEvent(UUID, "network-vif-plugged", tag="p1"))


def test_waiting_for_events_sent_while_the_block_runs() -> None:
    waiters = InstanceEventWaiters()
    events = [("network-vif-plugged", "p1"), ("volume-reimaged", "v1")]
    with waiters.waiting_for(UUID, events, timeout=30):
        # Another thread (the RPC server) delivers while the operation waits.
        sender = threading.Thread(target=lambda: [
            waiters.deliver(ExternalEvent(UUID, name, tag=tag)) for name, tag in events
        ])  # fmt: skip
        sender.start()
    sender.join()
    assert waiters.pending(UUID) == []


def test_a_failed_event_and_a_timeout_raise_and_disarm() -> None:
    waiters = InstanceEventWaiters()
    plugged = [("network-vif-plugged", "p1")]
    with pytest.raises(EventFailed, match="network-vif-plugged-p1"), waiters.waiting_for(UUID, plugged, timeout=30):  # fmt: skip
        waiters.deliver(ExternalEvent(UUID, "network-vif-plugged", "failed", "p1"))
    changed: list[tuple[str, str | None]] = [("network-changed", None)]
    with pytest.raises(EventTimeout, match="network-changed"), waiters.waiting_for(UUID, changed, timeout=0):  # fmt: skip
        pass
    assert waiters.pending(UUID) == []
    with pytest.raises(RuntimeError), waiters.waiting_for(UUID, changed, timeout=30):
        raise RuntimeError("the trigger failed")
    assert waiters.pending(UUID) == []


def test_cancel_releases_waiters_as_failed() -> None:
    waiters = InstanceEventWaiters()
    waiter = waiters.prepare(UUID, "network-vif-plugged", "p1")
    waiters.cancel(UUID)
    assert (waiter.wait(0).status, waiters.pending(UUID)) == ("failed", [])


def test_cancel_of_named_events_leaves_the_others() -> None:
    """A server's delete releases a volume-backed rebuild's wait only (event_waiters.cancel
    with ``names``); the released event keeps its name and tag, dashes and all."""
    waiters = InstanceEventWaiters()
    vif = waiters.prepare(UUID, "network-vif-plugged", "p1")
    reimaged = waiters.prepare(UUID, "volume-reimaged", "v-1")
    waiters.cancel(UUID, names=("volume-reimaged",))
    released = reimaged.wait(0)
    assert (released.name, released.tag, released.status) == ("volume-reimaged", "v-1", "failed")
    assert waiters.pending(UUID) == ["network-vif-plugged-p1"]
    waiters.deliver(ExternalEvent(UUID, "network-vif-plugged", tag="p1"))
    assert vif.wait(0).status == "completed" and waiters.pending(UUID) == []
