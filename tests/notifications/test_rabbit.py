# mypy: disable-error-code="no-untyped-call"
"""Notifications on the real RabbitMQ, consumed with oslo.messaging's own notification
listener: every versioned event the emitter has arrives on ``versioned_notifications`` in the
messagingv2 envelope and matches Nova's sample; legacy ones arrive on ``notifications``; the
1.0 ``messaging`` driver sends without the envelope.

RabbitMQ at 127.0.0.1:5672 (guest/guest): unreachable skips locally, fails under CI=true. Each
test uses its own exchange and topics and deletes them (and their queues) afterwards.
"""

from __future__ import annotations

import os
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from kombu.connection import Connection
from kombu.entity import Exchange, Queue
from oslo_config import cfg

from openkeel.conf import make_config
from openkeel.notifications.emitter import Notifier, close, notifier_from_conf
from tests.notifications.samples import assert_matches
from tests.notifications.test_payloads import INSTANCE, WHO, emit_every_event

oslo_messaging = pytest.importorskip("oslo_messaging")

RABBIT_URL = "rabbit://guest:guest@127.0.0.1:5672/"
DEADLINE = 20.0


def _require_rabbit() -> None:
    try:
        with socket.create_connection(("127.0.0.1", 5672), timeout=1):
            return
    except OSError as exc:
        message = f"RabbitMQ not reachable at 127.0.0.1:5672 — start it or run in CI ({exc})"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


@dataclass
class Received:
    """What an oslo.messaging notification endpoint was given."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    contexts: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def _add(self, priority: str, ctxt: Any, publisher_id: str, event_type: str, payload: Any) -> None:  # fmt: skip
        with self.lock:
            self.messages.append({"priority": priority, "publisher_id": publisher_id,
                                  "event_type": event_type, "payload": payload})  # fmt: skip
            self.contexts.append(dict(ctxt))

    def info(self, ctxt: Any, publisher_id: str, event_type: str, payload: Any, metadata: Any) -> None:  # fmt: skip
        self._add("INFO", ctxt, publisher_id, event_type, payload)

    def error(self, ctxt: Any, publisher_id: str, event_type: str, payload: Any, metadata: Any) -> None:  # fmt: skip
        self._add("ERROR", ctxt, publisher_id, event_type, payload)

    def wait_for(self, count: int) -> list[dict[str, Any]]:
        deadline = time.monotonic() + DEADLINE
        while time.monotonic() < deadline:
            with self.lock:
                if len(self.messages) >= count:
                    return list(self.messages)
            time.sleep(0.02)
        raise AssertionError(f"{len(self.messages)} of {count} notifications arrived")


@dataclass
class Bus:
    """One test's exchange and topics on the broker."""

    exchange: str = field(default_factory=lambda: f"openkeel_notify_{uuid.uuid4().hex[:12]}")
    versioned: str = field(default_factory=lambda: f"versioned_{uuid.uuid4().hex[:8]}")
    legacy: str = field(default_factory=lambda: f"legacy_{uuid.uuid4().hex[:8]}")

    def notifier(self, driver: str = "messagingv2", fmt: str = "both") -> Notifier:
        conf = make_config(overrides={
            "control_exchange": self.exchange,
            "notifications.notification_format": fmt,
            "notifications.versioned_notifications_topics": [self.versioned],
            "notifications.notify_on_state_change": "vm_and_task_state",
            "oslo_messaging_notifications.driver": [driver],
            "oslo_messaging_notifications.transport_url": RABBIT_URL,
            "oslo_messaging_notifications.topics": [self.legacy],
        })  # fmt: skip
        return notifier_from_conf(conf)

    def remove(self) -> None:
        with Connection(RABBIT_URL.replace("rabbit://", "amqp://")) as connection:
            channel = connection.channel()
            for topic in (self.versioned, self.legacy):
                for priority in ("info", "error"):
                    Queue(f"{topic}.{priority}", channel=channel).delete()
            Exchange(self.exchange, channel=channel).delete()


@pytest.fixture
def bus() -> Iterator[Bus]:
    _require_rabbit()
    made = Bus()
    yield made
    made.remove()


@pytest.fixture
def listen(bus: Bus) -> Iterator[Any]:
    """Starts oslo.messaging's notification listener on the bus's topics."""
    started: list[tuple[Any, Any]] = []

    def start(*topics: str) -> Received:
        conf = cfg.ConfigOpts()
        conf([])
        transport = oslo_messaging.get_notification_transport(conf, url=RABBIT_URL)
        received = Received()
        targets = [oslo_messaging.Target(topic=t, exchange=bus.exchange) for t in topics]
        listener = oslo_messaging.get_notification_listener(
            transport, targets, [received], executor="threading"
        )
        listener.start()
        started.append((listener, transport))
        return received

    yield start
    for listener, transport in started:
        listener.stop()
        listener.wait()
        transport.cleanup()


def test_every_versioned_event_arrives_as_nova_sends_it(bus: Bus, listen: Any) -> None:
    notifier = bus.notifier(fmt="versioned")
    received = listen(bus.versioned)
    try:
        count = emit_every_event(notifier.prepare("nova-compute", "compute"), notifier.prepare("nova-api", "api"))  # fmt: skip
    finally:
        close(notifier)
    messages = received.wait_for(count)
    assert len(messages) == count
    for message in messages:
        assert_matches(message, message["event_type"].replace(".", "-"))
    assert received.contexts[0]["request_id"] == WHO.request_id


def test_legacy_and_versioned_go_to_their_topics(bus: Bus, listen: Any) -> None:
    notifier = bus.notifier(fmt="both").prepare("nova-compute", "compute")
    try:
        # sent before anyone listens: the default queues keep them
        notifier.instance_action(INSTANCE, "pause", "start", WHO)
    finally:
        close(notifier)
    versioned, legacy = listen(bus.versioned), listen(bus.legacy)
    (v,) = versioned.wait_for(1)
    (u,) = legacy.wait_for(1)
    assert (v["event_type"], v["publisher_id"]) == ("instance.pause.start", "nova-compute:compute")  # fmt: skip
    assert (u["event_type"], u["publisher_id"]) == ("compute.instance.pause.start", "compute.compute")  # fmt: skip
    assert u["payload"]["instance_id"] == INSTANCE.uuid


def test_messaging_driver_sends_without_envelope(bus: Bus, listen: Any) -> None:
    received = listen(bus.legacy)
    notifier = bus.notifier(driver="messaging", fmt="unversioned").prepare("nova-compute", "c")
    try:
        notifier.instance_action(INSTANCE, "reboot", "error", WHO, fault=ValueError("boom"))
    finally:
        close(notifier)
    (message,) = received.wait_for(1)
    assert (message["priority"], message["event_type"]) == ("ERROR", "compute.instance.reboot.error")  # fmt: skip
    assert message["payload"]["message"] == "boom"
