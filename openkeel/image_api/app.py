"""The image API as an ASGI wrapper: ``/image...`` is answered here, the rest by ``fallback``.

Built by :func:`build_image_app` from the composition roots (``openkeel.cmd.api``), which pass
the compute API app as ``fallback`` and an ``identify`` function: the caller of a request from
its headers, by the same authentication the compute API uses (noauth today, a Keystone token
later), so this role never imports the compute API. The request path: prefix -> route (404 /
405) -> identify (401, skipped for version discovery) -> body (read whole, or streamed to the
handler for uploads) -> handler on a worker thread -> reply (JSON, or a byte stream for
downloads). Errors are rendered by class in :mod:`openkeel.image_api.faults`.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import pkgutil
import uuid
from collections.abc import Callable, Iterator
from typing import Any, TypeVar
from urllib.parse import parse_qsl

import orjson

from openkeel.clients.image import Caller
from openkeel.image_api import resources
from openkeel.image_api.faults import (
    ClientGone,
    ImageApiFault,
    RequestEntityTooLarge,
    fault_for,
    render,
)
from openkeel.image_api.request import Endpoint, ImageRequest, Reply, RouteTable
from openkeel.logcontext import LogContext, bound, set_current
from openkeel.runtime.asgi import base_url, scope_headers
from openkeel.runtime.asgi_apps import (
    ASGIApp,
    BodyTooLarge,
    Message,
    PrefixedApp,
    Receive,
    Scope,
    Send,
    Workers,
    read_body,
)

LOG = logging.getLogger(__name__)

# (lower-cased headers, request id) -> the caller; raises domain Unauthorized. May block.
Identify = Callable[[dict[str, str], str], Caller]

PREFIX = "/image"
T = TypeVar("T")


def build_routes() -> RouteTable:
    """Every resource's routes, discovered from ``openkeel.image_api.resources``."""
    table = RouteTable()
    for info in sorted(pkgutil.iter_modules(resources.__path__), key=lambda m: m.name):
        if info.ispkg:
            importlib.import_module(f"{resources.__name__}.{info.name}.routes").register(table)
    return table


class ImageApiApp(PrefixedApp):
    """Serves ``PREFIX`` and hands every other request to ``fallback``."""

    prefix = PREFIX

    def __init__(
        self, fallback: ASGIApp, services: Any, identify: Identify, workers: int = 8
    ) -> None:
        super().__init__(fallback, Workers(workers, "image-api"))
        self.services = services
        self.identify = identify
        self.routes = build_routes()

    async def serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        path: str = scope["path"]
        request_id = f"req-{uuid.uuid4()}"
        headers = scope_headers(scope)
        with bound(LogContext(request_id)):
            try:
                reply = await self._handle(scope, receive, headers, request_id)
            except Exception as exc:  # every error is answered in Glance's format
                fault = fault_for(exc)
                if not isinstance(exc, ImageApiFault) and fault.status >= 500:
                    LOG.exception("%s %s failed", scope.get("method"), path)
                ctype, body = render(fault, headers.get("accept", ""))
                extra = [(k.lower().encode(), v.encode()) for k, v in fault.headers]
                await _start(send, fault.status, ctype, request_id, len(body), extra)
                await send({"type": "http.response.body", "body": body})
                return
        await self._send(send, scope, reply, request_id)

    async def _handle(
        self, scope: Scope, receive: Receive, headers: dict[str, str], request_id: str
    ) -> Reply:
        method: str = scope["method"]
        ep, params = self.routes.match(method, scope["path"][len(PREFIX) :] or "/", scope)
        caller = Caller(None)
        if not ep.anonymous:
            caller = await self.workers.run(self.identify, headers, request_id)
            set_current(LogContext(request_id, None, caller.project_id))
        req = ImageRequest(
            method=method,
            params=params,
            query=parse_qsl(scope.get("query_string", b"").decode("latin-1"), True),
            headers=headers,
            caller=caller,
            services=self.services,
            base=base_url(scope, headers) + PREFIX,
        )
        if ep.streams_body:
            req.chunks = _chunks(receive, asyncio.get_running_loop())
        else:
            req.body = await _read_body(receive)
        return await self.workers.run(_call, ep, req)

    async def _send(self, send: Send, scope: Scope, reply: Reply, request_id: str) -> None:
        extra = [(k.lower().encode(), v.encode()) for k, v in reply.headers]
        if reply.status == 204:  # no body, so no content type (clients parse a typed one)
            await _start(send, 204, None, request_id, None, extra)
            await send({"type": "http.response.body", "body": b""})
            return
        if reply.stream is None:
            body = orjson.dumps(reply.body)
            await _start(send, reply.status, b"application/json", request_id, len(body), extra)
            await send({"type": "http.response.body", "body": body})
            return
        await _start(send, reply.status, b"application/octet-stream", request_id, None, extra)
        chunks = iter(reply.stream)
        try:
            while scope["method"] != "HEAD":
                chunk = await self.workers.run(next, chunks, None)
                if chunk is None:
                    break
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b""})
        finally:  # a HEAD, or a client gone mid-download: the data file is closed now
            close = getattr(chunks, "close", None)
            if close is not None:
                close()


def build_image_app(fallback: ASGIApp, services: Any, identify: Identify) -> ImageApiApp:
    """The image API in front of ``fallback`` (the compute API)."""
    return ImageApiApp(fallback, services, identify)


def _call(ep: Endpoint, req: ImageRequest) -> Reply:
    return ep.handler(req)


def _chunks(receive: Receive, loop: asyncio.AbstractEventLoop) -> Iterator[bytes]:
    """The request body as it arrives, for a handler on a worker thread (ClientGone when the
    client disconnects first)."""

    async def next_message() -> Message:
        return await receive()

    while True:
        message = asyncio.run_coroutine_threadsafe(next_message(), loop).result()
        if message["type"] == "http.disconnect":
            raise ClientGone("The client closed the connection during the upload.")
        yield message.get("body", b"")
        if not message.get("more_body"):
            return


async def _start(
    send: Send,
    status: int,
    content_type: bytes | None,
    request_id: str,
    length: int | None,
    extra: list[tuple[bytes, bytes]],
) -> None:
    headers = [(b"x-openstack-request-id", request_id.encode())]
    if content_type is not None:
        headers.append((b"content-type", content_type))
    if length is not None:
        headers.append((b"content-length", str(length).encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers + extra})


async def _read_body(receive: Receive, limit: int = 1024 * 1024) -> bytes:
    try:
        return await read_body(receive, limit)
    except BodyTooLarge as exc:
        raise RequestEntityTooLarge("The request body is too large.") from exc
