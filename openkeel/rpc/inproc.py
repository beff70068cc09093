"""In-process transport: the embedded default (``transport_url = inproc://``).

All roles of an all-in-one process share one ``_Broker`` per URL name and exchange. Messages are
JSON-encoded and decoded on the way, like on RabbitMQ, so roles never share mutable objects.
Delivery hands each message to the server's ``on_message`` (which queues it on the server's
thread pool), so a handler that itself calls another server never blocks the sender.

As on RabbitMQ, a queue outlives its consumer: once a server has listened on a topic (or on
``topic.<server>``), messages sent there while no server listens wait in that queue and are
delivered when one listens again (a compute role restarted in the same process gets the builds
cast to it meanwhile). A queue nobody ever listened on drops its messages, as an unbound
routing key does. Everything queued dies with the process, as it would with a broker restart.
"""

from __future__ import annotations

import itertools
import threading
import uuid
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from openkeel.rpc import errors
from openkeel.rpc.message import Message, Reply, Target, decode_message, decode_reply, encode
from openkeel.rpc.transport import Incoming, OnMessage

_BROKERS: dict[str, _Broker] = {}
_BROKERS_LOCK = threading.Lock()


@dataclass(eq=False)
class _Subscription:
    topic: str
    server: str | None
    on_message: OnMessage
    active: bool = True


_QueueKey = tuple[str, str | None]


@dataclass
class _Broker:
    """Subscriptions by topic, with a round-robin counter per queue, and the messages waiting
    in queues whose consumers are gone."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    subscriptions: list[_Subscription] = field(default_factory=list)
    counter: itertools.count[int] = field(default_factory=itertools.count)
    declared: set[_QueueKey] = field(default_factory=set)
    waiting: dict[_QueueKey, list[tuple[Message, Callable[[Reply], None]]]] = field(
        default_factory=dict
    )

    def pick(
        self, target: Target, message: Message, reply: Callable[[Reply], None]
    ) -> list[_Subscription]:
        """Receivers of a message for ``target``: one, every one (fanout) or none; with none,
        a declared queue keeps the message for the next consumer."""
        with self.lock:
            matching = [
                sub
                for sub in self.subscriptions
                if sub.active
                and sub.topic == target.topic
                and (target.server in (None, sub.server))
            ]
            if target.fanout:
                return matching
            if not matching:
                key = (target.topic, target.server)
                if key in self.declared:
                    self.waiting.setdefault(key, []).append((message, reply))
                return []
            return [matching[next(self.counter) % len(matching)]]

    def subscribe(
        self, subscription: _Subscription
    ) -> list[tuple[Message, Callable[[Reply], None]]]:
        """Add a consumer; returns the messages that waited for its queues."""
        with self.lock:
            self.subscriptions.append(subscription)
            keys = [(subscription.topic, None), (subscription.topic, subscription.server)]
            self.declared.update(keys)
            return [item for key in keys for item in self.waiting.pop(key, [])]


class _InprocListener:
    def __init__(self, broker: _Broker, subscription: _Subscription) -> None:
        self._broker = broker
        self._subscription = subscription

    def stop(self) -> None:
        with self._broker.lock:
            self._subscription.active = False
            if self._subscription in self._broker.subscriptions:
                self._broker.subscriptions.remove(self._subscription)


class InprocTransport:
    """``Transport`` for roles living in one process."""

    durable = False  # a cast dies with the process

    def __init__(self, url: str, *, exchange: str = "openkeel") -> None:
        parts = urlsplit(url)
        key = f"{parts.netloc}{parts.path}|{exchange}"
        with _BROKERS_LOCK:
            self._broker = _BROKERS.setdefault(key, _Broker())
        self._closed = False

    def call(self, target: Target, message: Message, timeout: float) -> Reply:
        self._check_open()
        future: Future[Reply] = Future()
        message = {**message, "reply_to": f"inproc-{uuid.uuid4()}"}

        def reply(answer: Reply) -> None:
            if not future.done():
                future.set_result(decode_reply(encode(answer)))

        self._deliver(target, message, reply)
        try:
            return future.result(timeout=timeout)
        except FutureTimeout:
            raise errors.MessagingTimeout(
                f"Timed out waiting for a reply to message ID {message['msg_id']}"
            ) from None

    def cast(self, target: Target, message: Message) -> None:
        self._check_open()
        self._deliver(target, {**message, "reply_to": None}, _no_reply)

    def listen(self, target: Target, on_message: OnMessage) -> _InprocListener:
        self._check_open()
        subscription = _Subscription(target.topic, target.server, on_message)
        for message, reply in self._broker.subscribe(subscription):
            on_message(Incoming(decode_message(encode(message)), reply))
        return _InprocListener(self._broker, subscription)

    def close(self) -> None:
        self._closed = True

    def _deliver(self, target: Target, message: Message, reply: Callable[[Reply], None]) -> None:
        body = encode(message)
        for subscription in self._broker.pick(target, decode_message(body), reply):
            subscription.on_message(Incoming(decode_message(body), reply))

    def _check_open(self) -> None:
        if self._closed:
            raise errors.TransportUnavailable("The transport has been closed")


def _no_reply(answer: Reply) -> None:
    """Replies to casts go nowhere."""
