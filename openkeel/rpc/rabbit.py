# mypy: disable-error-code="no-untyped-call"
"""RabbitMQ transport through kombu (``transport_url = rabbit://user:pass@host:port/vhost``).

Layout on the broker, all names prefixed with the transport's ``exchange`` (so tests and other
deployments sharing a vhost never collide): a topic exchange ``<exchange>`` with queues
``<exchange>.<topic>`` (shared by a topic's servers) and ``<exchange>.<topic>.<server>``
(server-targeted, Nova's ``compute.<host>``); a fanout exchange ``<exchange>.<topic>_fanout``
with one queue per server; one reply queue per transport on the default exchange. Queues are
not auto-deleted but expire when unused (``x-expires``), so messages sent while a consumer is
reconnecting wait for it. kombu connections are not thread-safe: each consumer (a server's
listener, the reply consumer) owns a connection and a thread that reconnects after a loss;
publishing goes through one lock-guarded connection that reconnects and retries.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import uuid
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from urllib.parse import urlsplit, urlunsplit

from kombu.connection import Connection
from kombu.entity import Exchange, Queue
from kombu.exceptions import OperationalError as KombuOperationalError
from kombu.message import Message as KombuMessage
from kombu.messaging import Producer

from openkeel.rpc import errors
from openkeel.rpc.message import Message, Reply, Target, decode_message, decode_reply, encode
from openkeel.rpc.transport import Incoming, OnMessage

LOG = logging.getLogger(__name__)

PUBLISH_ATTEMPTS = 5
READY_TIMEOUT = 30.0
POLL_INTERVAL = 0.2


def kombu_url(url: str) -> str:
    """Nova's ``rabbit://`` URL in kombu's spelling (``amqp://``, vhost ``/`` by default)."""
    parts = urlsplit(url)
    return urlunsplit(("amqp", parts.netloc, parts.path or "/", parts.query, ""))


def _connection_errors(connection: Connection) -> tuple[type[BaseException], ...]:
    return (
        *connection.connection_errors,
        *connection.channel_errors,
        OSError,
    )


class _Publisher:
    """One connection shared by every sending thread, guarded by a lock."""

    def __init__(self, url: str) -> None:
        self._url = url
        self._lock = threading.Lock()
        self._connection: Connection | None = None
        self._declared: set[str] = set()

    def publish(
        self, body: bytes, exchange: Exchange | None, routing_key: str, queue: Queue | None = None
    ) -> None:
        with self._lock:
            for attempt in range(1, PUBLISH_ATTEMPTS + 1):
                try:
                    connection = self._connect()
                except (KombuOperationalError, OSError) as exc:  # broker down or unreachable
                    LOG.warning("Cannot connect to RabbitMQ (attempt %s): %s", attempt, exc)
                    if attempt == PUBLISH_ATTEMPTS:
                        raise errors.MessagingError(f"Cannot reach RabbitMQ: {exc}") from exc
                    continue
                try:
                    if queue is not None:
                        self._declare(connection, queue)
                    self._publish(connection, body, exchange, routing_key)
                    return
                except _connection_errors(connection) as exc:
                    LOG.warning("Publish failed (attempt %s): %s", attempt, exc)
                    self._reset()
                    if attempt == PUBLISH_ATTEMPTS:
                        raise errors.MessagingError(f"Cannot publish to RabbitMQ: {exc}") from exc

    def connection(self) -> Connection | None:
        return self._connection

    def close(self) -> None:
        with self._lock:
            self._reset()

    def _declare(self, connection: Connection, queue: Queue) -> None:
        """Declare the queue a message is sent to (once per connection), so that it waits
        there even when the broker lost the queue (a restart drops non-durable queues) and its
        consumer has not declared it again yet. A queue that exists with other arguments (a
        sender with another expiry) is left as it is; that needs its own channel, which the
        broker closes on the refusal."""
        if queue.name in self._declared:
            return
        channel = connection.channel()
        try:
            queue(channel).declare()
        except tuple(connection.channel_errors) as exc:  # e.g. 406 PRECONDITION_FAILED
            LOG.debug("Queue %s not declared (%s); sending anyway", queue.name, exc)
        finally:
            with contextlib.suppress(*_connection_errors(connection)):
                channel.close()
        self._declared.add(queue.name)

    def _publish(
        self,
        connection: Connection,
        body: bytes,
        exchange: Exchange | None,
        routing_key: str,
    ) -> None:
        channel = connection.default_channel
        if exchange is not None and exchange.name not in self._declared:
            exchange(channel).declare()
            self._declared.add(exchange.name)
        Producer(channel).publish(
            body,
            exchange=exchange or "",
            routing_key=routing_key,
            content_type="application/json",
            content_encoding="utf-8",
        )

    def _connect(self) -> Connection:
        if self._connection is None:
            connection = Connection(self._url, connect_timeout=5)
            connection.ensure_connection(max_retries=3, interval_start=0.2, interval_step=0.5)
            self._connection = connection
        return self._connection

    def _reset(self) -> None:
        connection, self._connection = self._connection, None
        self._declared.clear()
        if connection is not None:
            try:
                connection.release()
            except Exception:  # the connection is already broken; nothing to release
                LOG.debug("Ignoring error while releasing a broken connection", exc_info=True)


STOP_TIMEOUT = 5.0


class _ConsumerLoop:
    """A thread consuming ``queues`` on its own connection, reconnecting after any loss."""

    def __init__(
        self, url: str, queues: list[Queue], on_body: Callable[[bytes], None], name: str
    ) -> None:
        self._url = url
        self._queues = queues
        self._on_body = on_body
        self.ready = threading.Event()
        self._stopping = threading.Event()
        self._connection: Connection | None = None
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> None:
        self._thread.start()
        if not self.ready.wait(READY_TIMEOUT):
            self.stop()
            raise errors.TransportUnavailable(f"Cannot consume from RabbitMQ at {self._url}")

    def stop(self) -> None:
        self._stopping.set()
        if not self._thread.is_alive() or self._thread is threading.current_thread():
            return
        self._thread.join(STOP_TIMEOUT)
        connection = self._connection
        if self._thread.is_alive() and connection is not None:
            # Blocked on a broker that no longer answers (e.g. in basic_cancel): close the
            # socket under it so the thread can notice it is stopping.
            try:
                connection.collect()
            except Exception:  # closing a broken connection may fail; we only need it gone
                LOG.debug("Ignoring error while collecting a stuck connection", exc_info=True)
            self._thread.join(STOP_TIMEOUT)

    def connection(self) -> Connection | None:
        return self._connection

    def _run(self) -> None:
        delay = 0.1
        while not self._stopping.is_set():
            try:
                self._consume()
                delay = 0.1
            except Exception as exc:  # any loss: log, back off, reconnect
                self.ready.clear()
                LOG.warning("RabbitMQ consumer %s lost its connection: %s", self._thread.name, exc)
                self._stopping.wait(delay)
                delay = min(delay * 2, 2.0)

    def _consume(self) -> None:
        with Connection(self._url, connect_timeout=5) as connection:
            connection.ensure_connection(max_retries=1)
            self._connection = connection
            try:
                with connection.Consumer(self._queues, on_message=self._deliver, no_ack=True):
                    self.ready.set()
                    while not self._stopping.is_set():
                        try:
                            connection.drain_events(timeout=POLL_INTERVAL)
                        except TimeoutError:
                            continue
            finally:
                self._connection = None

    def _deliver(self, message: KombuMessage) -> None:
        try:
            self._on_body(message.body)
        except Exception:  # a bad message must not kill the consumer
            LOG.exception("Cannot handle a message on %s", self._thread.name)


class _RabbitListener:
    def __init__(self, loop: _ConsumerLoop) -> None:
        self._loop = loop

    def stop(self) -> None:
        self._loop.stop()


class RabbitTransport:
    """``Transport`` over a RabbitMQ broker."""

    durable = True  # casts wait in the broker's queues

    def __init__(
        self, url: str, *, exchange: str = "openkeel", queue_expiry: float = 1800.0
    ) -> None:
        self._url = kombu_url(url)
        self._prefix = exchange
        self._expiry_ms = int(queue_expiry * 1000)
        self._exchange = Exchange(exchange, "topic", durable=False, auto_delete=True)
        self._publisher = _Publisher(self._url)
        self._reply_queue_name = f"{exchange}.reply_{uuid.uuid4().hex}"
        self._pending: dict[str, Future[Reply]] = {}
        self._lock = threading.Lock()
        self._reply_loop: _ConsumerLoop | None = None
        self._loops: list[_ConsumerLoop] = []
        self._closed = False

    def call(self, target: Target, message: Message, timeout: float) -> Reply:
        self._ensure_reply_consumer()
        future: Future[Reply] = Future()
        msg_id = message["msg_id"]
        with self._lock:
            self._pending[msg_id] = future
        try:
            self._send(target, {**message, "reply_to": self._reply_queue_name})
            return future.result(timeout=timeout)
        except FutureTimeout:
            raise errors.MessagingTimeout(
                f"Timed out waiting for a reply to message ID {msg_id}"
            ) from None
        finally:
            with self._lock:
                self._pending.pop(msg_id, None)

    def cast(self, target: Target, message: Message) -> None:
        self._send(target, {**message, "reply_to": None})

    def listen(self, target: Target, on_message: OnMessage) -> _RabbitListener:
        self._check_open()
        fanout = self._fanout_exchange(target.topic)
        queues = [self._queue(target.topic, self._exchange, target.topic)]
        if target.server:
            key = f"{target.topic}.{target.server}"
            queues.append(self._queue(key, self._exchange, key))
        queues.append(self._queue(f"{target.topic}_fanout_{uuid.uuid4().hex}", fanout, ""))

        def on_body(body: bytes) -> None:
            message = decode_message(body)
            on_message(Incoming(message, self._replier(message["reply_to"])))

        loop = _ConsumerLoop(self._url, queues, on_body, f"rpc-listen-{target.topic}")
        loop.start()
        with self._lock:
            self._loops.append(loop)
        return _RabbitListener(loop)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            loops, self._loops = self._loops, []
            reply_loop, self._reply_loop = self._reply_loop, None
        for loop in [*loops, *([reply_loop] if reply_loop else [])]:
            loop.stop()
        self._publisher.close()

    def connections(self) -> list[Connection]:
        """Live broker connections of this transport (diagnostics; tests cut them)."""
        with self._lock:
            loops = [*self._loops, *([self._reply_loop] if self._reply_loop else [])]
        found = [loop.connection() for loop in loops] + [self._publisher.connection()]
        return [connection for connection in found if connection is not None]

    def _send(self, target: Target, message: Message) -> None:
        self._check_open()
        if target.fanout:
            self._publisher.publish(encode(message), self._fanout_exchange(target.topic), "")
            return
        key = f"{target.topic}.{target.server}" if target.server else target.topic
        queue = self._queue(key, self._exchange, key)
        self._publisher.publish(encode(message), self._exchange, key, queue)

    def _replier(self, reply_to: str | None) -> Callable[[Reply], None]:
        def reply(answer: Reply) -> None:
            if reply_to is not None:
                self._publisher.publish(encode(answer), None, reply_to)

        return reply

    def _on_reply(self, body: bytes) -> None:
        reply = decode_reply(body)
        with self._lock:
            future = self._pending.pop(reply["msg_id"], None)
        if future is not None and not future.done():
            future.set_result(reply)

    def _ensure_reply_consumer(self) -> None:
        self._check_open()
        with self._lock:
            if self._reply_loop is None:
                queue = Queue(
                    self._reply_queue_name,
                    durable=False,
                    queue_arguments={"x-expires": self._expiry_ms},
                )
                self._reply_loop = _ConsumerLoop(self._url, [queue], self._on_reply, "rpc-reply")
                self._reply_loop.start()

    def _fanout_exchange(self, topic: str) -> Exchange:
        return Exchange(f"{self._prefix}.{topic}_fanout", "fanout", durable=False, auto_delete=True)

    def _queue(self, name: str, exchange: Exchange, routing_key: str) -> Queue:
        return Queue(
            f"{self._prefix}.{name}",
            exchange=exchange,
            routing_key=routing_key,
            durable=False,
            queue_arguments={"x-expires": self._expiry_ms},
        )

    def _check_open(self) -> None:
        if self._closed:
            raise errors.TransportUnavailable("The transport has been closed")
