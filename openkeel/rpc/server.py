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

    def start(self) -> RpcServer:
        """Begin consuming messages (idempotent)."""
        with self._lock:
            if self._listener is None:
                self._pool = ThreadPoolExecutor(
                    self._pool_size, thread_name_prefix=f"rpc-{self.target.topic}"
                )
                self._listener = self.transport.listen(self.target, self._on_message)
        return self

    def stop(self, *, drain: bool = True) -> None:
        """Stop consuming; with ``drain`` wait for the messages in progress, without it
        abandon them (what a crash does: queued work is dropped, running work is orphaned)."""
        with self._lock:
            listener, pool = self._listener, self._pool
            self._listener = self._pool = None
        if listener is not None:
            listener.stop()
        if pool is not None:
            pool.shutdown(wait=drain, cancel_futures=not drain)

    def _on_message(self, incoming: Incoming) -> None:
        pool = self._pool
        if pool is None:
            LOG.warning("Dropping %s: server stopped", incoming.message["method"])
            return
        try:
            pool.submit(self._handle, incoming)
        except RuntimeError:
            LOG.warning("Dropping %s: server stopping", incoming.message["method"])

    def _handle(self, incoming: Incoming) -> None:
        context = CallContext.from_dict(incoming.message["context"])
        with bound(LogContext(context.request_id, context.user_id, context.project_id)):
            self._answer(incoming)

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
