"""RPC servers: listen on a target and dispatch each message to an endpoint method.

Role services (compute, conductor, scheduler) create one ``RpcServer`` per topic with their
endpoint objects. An endpoint declares the API version it serves (``rpc_version``) and,
optionally, a ``rpc_namespace`` and its typed messages (``rpc_messages``, by method name:
``openkeel.rpc.messages``). A method with a message class is called as
``method(context, message)``, the message rebuilt from the arguments; other public methods as
``method(context, **args)``. Calls run on a thread pool, one pool per server. While a message
is handled, its context is the current request of ``openkeel.logcontext``, so the role's log
lines carry the request id of the API request that sent it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import ClassVar, Protocol

from openkeel import metrics
from openkeel.logcontext import LogContext, bound
from openkeel.rpc import errors
from openkeel.rpc.message import (
    CallContext,
    Message,
    Primitive,
    Reply,
    Target,
    describe,
    is_compatible,
    to_primitive,
)
from openkeel.rpc.transport import Incoming, Listener, Transport

LOG = logging.getLogger(__name__)

DEFAULT_POOL_SIZE = 64  # oslo.messaging's executor_thread_pool_size


class Endpoint(Protocol):
    """What a server dispatches to: an object with versioned public methods."""

    rpc_version: ClassVar[str]


class RpcServer:
    """Serves ``endpoints`` on ``target`` (topic + this server's name) over ``transport``."""

    def __init__(
        self,
        transport: Transport,
        target: Target,
        endpoints: Sequence[object],
        *,
        pool_size: int = DEFAULT_POOL_SIZE,
    ) -> None:
        self.transport = transport
        self.target = target
        self.endpoints = tuple(endpoints)
        self._pool_size = pool_size
        self._pool: ThreadPoolExecutor | None = None
        self._listener: Listener | None = None
        self._lock = threading.Lock()
        # Messages received and not yet answered (queued on the pool or running): what a
        # graceful stop waits for.
        self._busy = 0
        self.received = 0  # messages taken since start (counts every one, for wait_quiet)
        self._idle = threading.Condition()

    def start(self) -> RpcServer:
        """Begin consuming messages (idempotent)."""
        with self._lock:
            if self._listener is None:
                self._pool = ThreadPoolExecutor(
                    self._pool_size, thread_name_prefix=f"rpc-{self.target.topic}"
                )
                self._listener = self.transport.listen(self.target, self._on_message)
        return self

    def stop(self, *, drain: bool = True, timeout: float | None = None) -> bool:
        """Stop consuming; with ``drain`` wait for the messages received (queued or running)
        up to ``timeout`` seconds (None: however long), without it abandon them (what a crash
        does: queued work is dropped, running work is orphaned). True when nothing was left
        unfinished."""
        self.stop_listening()
        finished = self.wait_idle(timeout) if drain else False
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            # Past the timeout, the running calls go on until the process exits; the messages
            # not started are dropped (the next start's reconciliation settles their servers).
            pool.shutdown(wait=finished, cancel_futures=not finished)
        return finished

    def stop_listening(self) -> None:
        """Take no more messages; those received still run (the first step of a graceful
        stop; the broker keeps later messages for another server or the next start)."""
        with self._lock:
            listener, self._listener = self._listener, None
        if listener is not None:
            listener.stop()

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait until every message received is answered; False if ``timeout`` ran out."""
        with self._idle:
            return self._idle.wait_for(lambda: self._busy == 0, timeout)

    @property
    def busy(self) -> int:
        """Messages received and not yet answered."""
        return self._busy

    def _on_message(self, incoming: Incoming) -> None:
        pool = self._pool
        if pool is None:
            LOG.warning("Dropping %s: server stopped", incoming.message["method"])
            return
        self._begin()
        try:
            pool.submit(self._handle, incoming)
        except RuntimeError:
            self._end()
            LOG.warning("Dropping %s: server stopping", incoming.message["method"])

    def _begin(self) -> None:
        with self._idle:
            self._busy += 1
            self.received += 1

    def _end(self) -> None:
        with self._idle:
            self._busy -= 1
            if self._busy == 0:
                self._idle.notify_all()

    def _handle(self, incoming: Incoming) -> None:
        try:
            context = CallContext.from_dict(incoming.message["context"])
            with bound(LogContext(context.request_id, context.user_id, context.project_id)):
                self._answer(incoming)
        finally:
            self._end()

    def _answer(self, incoming: Incoming) -> None:
        message = incoming.message
        result: Primitive = None
        failure = None
        start = time.perf_counter()
        try:
            result = to_primitive(self.dispatch(message))
        except Exception as exc:
            if message["reply_to"] is None:
                LOG.exception("Cast %s failed", message["method"])
            failure = describe(exc)
        metrics.observe_rpc_handled(message["method"], failure is None, time.perf_counter() - start)
        if message["reply_to"] is not None:
            reply: Reply = {"msg_id": message["msg_id"], "result": result, "failure": failure}
            incoming.reply(reply)

    def dispatch(self, message: Message) -> object:
        """Run the endpoint method ``message`` names; raise what it raises."""
        endpoint, method = self._find(message)
        context = CallContext.from_dict(message["context"])
        # A class attribute: endpoints may answer any name through ``__getattr__``.
        typed = getattr(type(endpoint), "rpc_messages", {}).get(message["method"])
        if typed is not None:
            return method(context, typed.from_args(message["args"]))
        return method(context, **message["args"])

    def _find(self, message: Message) -> tuple[object, Callable[..., object]]:
        name, version = message["method"], message["version"]
        in_namespace = [
            endpoint
            for endpoint in self.endpoints
            if getattr(endpoint, "rpc_namespace", None) == message["namespace"]
        ]
        compatible = [
            endpoint
            for endpoint in in_namespace
            if is_compatible(str(getattr(endpoint, "rpc_version", "1.0")), version)
        ]
        for endpoint in compatible:
            method = getattr(endpoint, name, None)
            if not name.startswith("_") and callable(method):
                return endpoint, method
        if in_namespace and not compatible:
            raise errors.UnsupportedVersion(
                f"Endpoint does not support RPC version {version}. Attempted method: {name}"
            )
        raise errors.NoSuchMethod(f"Endpoint does not support RPC method {name}")


def wait_quiet(servers: Sequence[RpcServer], timeout: float | None) -> bool:
    """Wait until none of ``servers`` has a message in hand and none arrived meanwhile (one
    server's work may send another a message), up to ``timeout`` seconds (None: however
    long). False when the time ran out."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        before = sum(server.received for server in servers)
        for server in servers:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not server.wait_idle(left):
                return False
        if sum(server.received for server in servers) == before:
            return True


class _Periodic(Protocol):
    def stop(self) -> None: ...


class ServingRole:
    """The graceful stop of a role served by one RPC server (conductor, scheduler): the
    role sets ``periodic`` (its periodic runner), ``heartbeats`` (the runner of its
    ``report_state``, a thread of its own as Nova's timer) and ``_server`` (while it serves)."""

    periodic: _Periodic
    heartbeats: _Periodic
    _server: RpcServer | None

    @property
    def rpc_servers(self) -> list[RpcServer]:
        """The RPC server, while running."""
        return [] if self._server is None else [self._server]

    def stop_taking_work(self) -> None:
        """The first step of a graceful stop: no periodic task (heartbeat included: the
        service shows down after ``service_down_time``) and no new message."""
        self.periodic.stop()
        self.heartbeats.stop()
        if self._server is not None:
            self._server.stop_listening()

    def stop(self, *, timeout: float | None = None) -> bool:
        """Stop; the messages in hand get ``timeout`` seconds (None: however long) to be
        answered. True when nothing was left unfinished."""
        self.stop_taking_work()
        server, self._server = self._server, None
        return server is None or server.stop(timeout=timeout)
