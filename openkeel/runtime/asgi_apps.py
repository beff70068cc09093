"""What the small HTTP roles in front of the compute API share (the image, identity, network and
volume APIs): a path table, a worker pool that ends with the server's lifespan, a bounded body
reader, and (:class:`JsonServiceApp`) the request pipeline of the JSON-only ones.

Each role turns :class:`NoRoute`, :class:`NoMethod` and :class:`BodyTooLarge` into its own
service's error format.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import re
import uuid
from collections.abc import Awaitable, Callable, MutableMapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar
from urllib.parse import parse_qsl

import orjson

from openkeel.logcontext import LogContext, bound, set_current
from openkeel.runtime.asgi import scope_headers
from openkeel.runtime.observability import ROUTE_KEY

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
T = TypeVar("T")
E = TypeVar("E")
LOG = logging.getLogger(__name__)


class NoRoute(LookupError):
    """No path template matches."""


class NoMethod(LookupError):
    """The path exists under other methods (``allow``)."""

    def __init__(self, allow: str) -> None:
        super().__init__(allow)
        self.allow = allow


class BodyTooLarge(ValueError):
    """The request body exceeds the reader's limit."""


@dataclass
class _Path(Generic[E]):
    template: str
    pattern: re.Pattern[str]
    methods: dict[str, E] = field(default_factory=dict)


class PathTable(Generic[E]):
    """Path templates (``/v2/images/{image_id}``) -> endpoints by method; HEAD falls back to
    GET. ``match`` raises the service's own errors: ``not_found()`` for an unknown path,
    ``not_allowed(allow)`` for a known path under another method."""

    def __init__(
        self,
        not_found: Callable[[], Exception],
        not_allowed: Callable[[str], Exception],
    ) -> None:
        self._paths: dict[str, _Path[E]] = {}
        self._not_found = not_found
        self._not_allowed = not_allowed

    def add(self, method: str, template: str, ep: E) -> None:
        if template not in self._paths:
            regex = re.sub(r"\{(\w+)\}", r"(?P<\1>[^/]+)", template.rstrip("/") or "/")
            self._paths[template] = _Path(template, re.compile(f"^{regex}/?$"))
        self._paths[template].methods[method] = ep

    def find(self, method: str, path: str, scope: Scope | None = None) -> tuple[E, dict[str, str]]:
        """The endpoint and path parameters (NoRoute, NoMethod); the template matched is left
        in ``scope`` for the metrics (``observability.ROUTE_KEY``)."""
        for route in self._paths.values():
            found = route.pattern.match(path)
            if found is None:
                continue
            if scope is not None:
                scope[ROUTE_KEY] = route.template
            ep = route.methods.get(method)
            if ep is None and method == "HEAD":
                ep = route.methods.get("GET")
            if ep is None:
                raise NoMethod(", ".join(sorted(route.methods)))
            return ep, found.groupdict()
        raise NoRoute(path)

    def match(self, method: str, path: str, scope: Scope | None = None) -> tuple[E, dict[str, str]]:
        """As :meth:`find`, with the service's errors."""
        try:
            return self.find(method, path, scope)
        except NoMethod as exc:
            raise self._not_allowed(exc.allow) from exc
        except NoRoute as exc:
            raise self._not_found() from exc


class Workers:
    """The threads an app runs its blocking handlers on; they end at lifespan shutdown."""

    def __init__(self, workers: int, name: str) -> None:
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix=name)

    async def run(self, func: Callable[..., T], *args: Any) -> T:
        """``func(*args)`` on a worker, in the caller's context (log context included)."""
        run = contextvars.copy_context().run
        return await asyncio.get_running_loop().run_in_executor(self._executor, run, func, *args)

    def watching_shutdown(self, receive: Receive) -> Receive:
        """``receive`` for the wrapped app's lifespan: these workers end at shutdown too."""

        async def watched() -> Message:
            message = await receive()
            if message["type"] == "lifespan.shutdown":
                self._executor.shutdown(wait=False)
            return message

        return watched

    @property
    def threads(self) -> tuple[Any, ...]:
        return tuple(getattr(self._executor, "_threads", ()))


async def read_body(receive: Receive, limit: int) -> bytes:
    """The whole request body (BodyTooLarge past ``limit`` bytes)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge(f"more than {limit} bytes")
        chunks.append(chunk)
        if not message.get("more_body"):
            return b"".join(chunks)


async def send_json(
    send: Send,
    scope: Scope,
    status: int,
    body: Any,
    request_id: str,
    headers: list[tuple[bytes, bytes]] | None = None,
) -> None:
    """One JSON answer (no body when ``body`` is None) with the request id, its length, and
    nothing sent for HEAD."""
    out = [(b"x-openstack-request-id", request_id.encode()), *(headers or [])]
    payload = b""
    if body is not None:
        payload = orjson.dumps(body)
        out.append((b"content-type", b"application/json"))
    out.append((b"content-length", str(len(payload)).encode()))
    if scope.get("method") == "HEAD":
        payload = b""
    await send({"type": "http.response.start", "status": status, "headers": out})
    await send({"type": "http.response.body", "body": payload})


class PrefixedApp:
    """An app that serves the paths under ``prefix`` (:meth:`serve`) and hands every other
    request, and the lifespan, to ``fallback``; its workers end with the lifespan."""

    prefix = ""

    def __init__(self, fallback: ASGIApp, workers: Workers) -> None:
        self.fallback = fallback
        self.workers = workers

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path: str = scope.get("path", "")
        if scope["type"] == "lifespan":
            await self.fallback(scope, self.workers.watching_shutdown(receive), send)
        elif scope["type"] == "http" and (
            path == self.prefix or path.startswith(self.prefix + "/")
        ):
            await self.serve(scope, receive, send)
        else:
            await self.fallback(scope, receive, send)

    async def serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        raise NotImplementedError


def query_of(scope: Scope) -> list[tuple[str, str]]:
    """The request's query string as (name, value) pairs, blank values kept."""
    return parse_qsl(scope.get("query_string", b"").decode("latin-1"), True)


class JsonServiceApp(PrefixedApp):
    """A service API that answers only JSON (the embedded network and volume APIs): one request
    id per request, bound to its log lines; :meth:`handle` gives (status, body); an exception
    becomes the service's error document by :meth:`fault` (logged once, with its traceback,
    when it is not one of the service's own faults); :meth:`reply_headers` adds headers to
    every answer."""

    async def serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        request_id = f"req-{uuid.uuid4()}"
        headers = scope_headers(scope)
        with bound(LogContext(request_id)):
            try:
                status, body = await self.handle(scope, receive, headers, request_id)
            except Exception as exc:
                status, body = self.fault(exc)
                if status >= 500:
                    LOG.exception("%s %s failed", scope.get("method"), scope.get("path"))
        await send_json(send, scope, status, body, request_id, self.reply_headers(headers))

    async def handle(
        self, scope: Scope, receive: Receive, headers: dict[str, str], request_id: str
    ) -> tuple[int, Any]:
        raise NotImplementedError

    def fault(self, exc: Exception) -> tuple[int, Any]:
        """The service's (status, error document) for ``exc``."""
        raise NotImplementedError

    def reply_headers(self, headers: dict[str, str]) -> list[tuple[bytes, bytes]]:
        return []

    async def caller(
        self, identify: Callable[[dict[str, str], str], Any], headers: dict[str, str],
        request_id: str,
    ) -> Any:  # fmt: skip
        """The caller ``identify`` finds in the headers (on a worker: it may block), bound to
        the log lines of the request by project."""
        found = await self.workers.run(identify, headers, request_id)
        set_current(LogContext(request_id, None, found.project_id))
        return found
