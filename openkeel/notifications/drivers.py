# mypy: disable-error-code="no-untyped-call"
"""Where notifications go: oslo.messaging's notification drivers by their names (``noop``,
``log``, ``test``, ``messaging``, ``messagingv2``) for the emitter.

``messaging``/``messagingv2`` speak oslo.messaging's notification wire format on RabbitMQ
through kombu (decision 0060): a topic exchange named ``[DEFAULT] control_exchange``, routing
key and default queue ``<topic>.<priority>`` (declared on first send so nothing is lost before a
consumer binds), the message with ``message_id``, ``publisher_id``, ``event_type``,
``priority``, ``payload``, ``timestamp``, ``_unique_id`` and the context as ``_context_*``
keys, wrapped in the 2.0 envelope (``oslo.version``/``oslo.message``) for messagingv2.
"""

from __future__ import annotations

import json
import logging
import threading
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import urlsplit, urlunsplit

from kombu.connection import Connection
from kombu.entity import Exchange, Queue

LOG = logging.getLogger(__name__)

# Attempts after a connection error when [oslo_messaging_notifications] retry is -1.
UNLIMITED_RETRY_CAP = 5


class NotificationDriver(Protocol):
    """Sends one notification message (already built) to each topic."""

    def notify(
        self,
        context: Mapping[str, Any],
        message: Mapping[str, Any],
        priority: str,
        topics: Sequence[str],
    ) -> None: ...

    def close(self) -> None: ...


class LogDriver:
    """oslo.messaging's ``log`` driver: the message as JSON on the logger
    ``oslo.messaging.notification.<event_type>`` at the notification's priority."""

    def notify(
        self,
        context: Mapping[str, Any],
        message: Mapping[str, Any],
        priority: str,
        topics: Sequence[str],
    ) -> None:
        logger = logging.getLogger(f"oslo.messaging.notification.{message['event_type']}")
        level = logging.getLevelName(priority.upper())
        if isinstance(level, int) and logger.isEnabledFor(level):
            logger.log(level, json.dumps(message, default=str))

    def close(self) -> None:
        pass


@dataclass
class Sent:
    """One notification a ``MemoryDriver`` received."""

    topic: str
    priority: str
    message: Mapping[str, Any]
    context: Mapping[str, Any]


@dataclass
class MemoryDriver:
    """oslo.messaging's ``test`` driver: keeps what it is given (tests read ``sent``)."""

    sent: list[Sent] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def notify(
        self,
        context: Mapping[str, Any],
        message: Mapping[str, Any],
        priority: str,
        topics: Sequence[str],
    ) -> None:
        with self._lock:
            for topic in topics:
                self.sent.append(Sent(topic, priority.lower(), message, context))

    def events(self, topic: str | None = None) -> list[str]:
        with self._lock:
            return [s.message["event_type"] for s in self.sent if topic in (None, s.topic)]

    def close(self) -> None:
        pass


def kombu_url(url: str) -> str:
    """A ``rabbit://`` transport URL in kombu's spelling."""
    parts = urlsplit(url)
    return urlunsplit(("amqp", parts.netloc, parts.path or "/", parts.query, ""))


class AmqpDriver:
    """oslo.messaging's ``messaging`` (version 1.0) / ``messagingv2`` (2.0) drivers on
    RabbitMQ. Sending never raises: a notification that cannot be sent is logged and
    dropped, as oslo.messaging does."""

    def __init__(self, url: str, exchange: str, *, envelope: bool, retry: int = -1) -> None:
        self._url = kombu_url(url)
        self._exchange = Exchange(exchange, type="topic", durable=False, auto_delete=False)
        self._envelope = envelope
        self._retry = UNLIMITED_RETRY_CAP if retry < 0 else retry
        self._lock = threading.Lock()
        self._connection: Connection | None = None

    def notify(
        self,
        context: Mapping[str, Any],
        message: Mapping[str, Any],
        priority: str,
        topics: Sequence[str],
    ) -> None:
        body: dict[str, Any] = {**message, "_unique_id": uuid.uuid4().hex}
        body.update((f"_context_{key}", value) for key, value in context.items())
        wire: dict[str, Any] = (
            {"oslo.version": "2.0", "oslo.message": json.dumps(body, default=str)}
            if self._envelope
            else body
        )
        for topic in topics:
            routing_key = f"{topic}.{priority.lower()}"
            try:
                self._publish(wire, routing_key)
            except Exception:
                LOG.exception("Could not send notification to %s", routing_key)

    def _publish(self, wire: Mapping[str, Any], routing_key: str) -> None:
        queue = Queue(
            routing_key,
            exchange=self._exchange,
            routing_key=routing_key,
            durable=False,
            auto_delete=False,
        )
        with self._lock:
            if self._connection is None:
                self._connection = Connection(self._url)
            producer = self._connection.Producer(serializer="json")
            producer.publish(
                dict(wire),
                exchange=self._exchange,
                routing_key=routing_key,
                declare=[self._exchange, queue],
                retry=True,
                retry_policy={"max_retries": self._retry, "interval_start": 0.5},
            )

    def close(self) -> None:
        with self._lock:
            if self._connection is not None:
                self._connection.release()
                self._connection = None
