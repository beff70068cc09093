"""The ASGI application of the compute API: mounts, negotiation, auth, dispatch, faults.

Built by :func:`openkeel.api.factory.build_api_app`. The request path, top to bottom:
mount (``/``, ``/v2``, ``/v2.1``) -> authentication -> route match (404) -> microversion
(400 / 406) -> content type (415) -> project id in URL (400) -> body parse (400) -> endpoint
window (404 / 410; 501 for Nova's routes not built yet) -> schema validation (400) -> handler
on a worker thread -> JSON reply. Every response carries the request id headers and every
error Nova's JSON fault body; versioned ones also carry version headers. Each request is the
current one of ``openkeel.logcontext`` while it is served (worker threads run in a copy of the
request's context), and an unexpected error is logged once, with its traceback, here.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import re
from collections.abc import Awaitable, Callable, MutableMapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import parse_qsl

import orjson

from openkeel.api import versions
from openkeel.api.auth import Authenticator
from openkeel.api.context import RequestContext, new_request_id
from openkeel.api.faults import (
    FAULT_CONTENT_TYPE,
    GONE_MESSAGE,
    NOT_FOUND_MESSAGE,
    NOT_SUPPORTED_MESSAGE,
    Fault,
    fault_for,
)
from openkeel.api.microversion import (
    LEGACY_V2,
    APIVersion,
    InvalidVersionString,
    VersionNotAcceptable,
    negotiate,
    requested_version_text,
)
from openkeel.api.policy import PolicyEnforcer
from openkeel.api.request import ApiRequest, Reply
from openkeel.api.routing import Endpoint, PathRoute, RouteTable
from openkeel.api.services import ApiServices
from openkeel.domain.errors import ComputeError, Invalid, Unauthorized
from openkeel.logcontext import LogContext, bound, set_current
from openkeel.runtime.asgi import base_url, scope_headers
from openkeel.runtime.observability import ROUTE_KEY

LOG = logging.getLogger(__name__)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

T = TypeVar("T")
JSON_TYPES = ("application/json", "application/vnd.openstack.compute+json")
PROJECT_ID_RE = re.compile(r"^[0-9a-f\-]+$")


class ApiError(Exception):
    """Internal: a fault to send, with or without version headers."""

    def __init__(self, fault: Fault, version: APIVersion | None = None) -> None:
        super().__init__(fault.message)
        self.fault = fault
        self.version = version


class NoRoute(Exception):
    """Internal: no route for this method on this path (Nova's router 404)."""


@dataclass
class Outgoing:
    """A response about to be sent."""

    status: int
    body: bytes
    content_type: bytes
    headers: list[tuple[bytes, bytes]]


class ComputeApiApp:
    """The /v2.1 API as an ASGI callable."""

    def __init__(
        self,
        routes: RouteTable,
        authenticator: Authenticator,
        enforcer: PolicyEnforcer,
        services: ApiServices,
        workers: int = 16,
        inline_bounded: bool = False,
    ) -> None:
        self.routes = routes
        self.authenticator = authenticator
        self.enforcer = enforcer
        self.services = services
        # Decision 0024: bounded reads run on the loop when the databases are local SQLite.
        self._inline_bounded = inline_bounded
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="api")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        request_id = new_request_id()
        with bound(LogContext(request_id)):
            out = await self._answer(scope, receive, request_id)
        rid = request_id.encode()
        headers = [
            (b"content-type", out.content_type),
            (b"content-length", str(len(out.body)).encode()),
            (b"x-openstack-request-id", rid),
            (b"x-compute-request-id", rid),
            *out.headers,
        ]
        await send({"type": "http.response.start", "status": out.status, "headers": headers})
        await send({"type": "http.response.body", "body": out.body})

    async def _answer(self, scope: Scope, receive: Receive, request_id: str) -> Outgoing:
        """The response; an unexpected error is logged here, once, and answered as a fault."""
        try:
            return await self._handle(scope, await _read_body(receive), request_id)
        except Exception as exc:  # the last resort: never leak a traceback to a client
            fault = fault_for(exc)
            LOG.exception(
                "%s %s failed: %d %s",
                scope.get("method"),
                scope.get("path"),
                fault.status,
                fault.message.splitlines()[-1],
            )
            return Outgoing(fault.status, fault.body(), FAULT_CONTENT_TYPE, [])

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                self._executor.shutdown(wait=False)
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _handle(self, scope: Scope, raw_body: bytes, request_id: str) -> Outgoing:
        path: str = scope["path"]
        headers = scope_headers(scope)
        base = base_url(scope, headers)
        mount, rest = _split_mount(path)
        if mount is None:
            return self._json(*versions.root_or_choices(path, base))
        if rest in ("", "/"):
            return self._json(200, versions.version_document(mount, base))
        try:
            context = await self._authenticate(headers, request_id)
        except Unauthorized as exc:
            return _unauthorized(exc, base)
        context.enforcer = self.enforcer
        set_current(LogContext(request_id, context.user_id, context.project_id))
        found, url_project = self._match(rest)
        if found is None:
            return self._fault(Fault(404, NOT_FOUND_MESSAGE), None, mount)
        route, params = found
        scope[ROUTE_KEY] = route.template
        version: APIVersion | None = None
        try:
            version = self._version(mount, headers)
            req = self._build(scope, headers, raw_body, route, params, version, context)
            req.link_base, req.bookmark_base = f"{base}/{mount}", base
            req.url_project_id = url_project
            if url_project is not None and url_project != context.project_id:
                raise Invalid(
                    f"Malformed request URL: URL's project_id '{url_project}' doesn't match "
                    f"Context's project_id '{context.project_id}'"
                )
            ep = self._endpoint(route, req)
            self._validate(ep, req)
            if ep.bounded and self._inline_bounded:
                result = _call(ep, req)  # cheaper than the hop to a worker thread
            else:
                result = await self._in_worker(_call, ep, req)
        except NoRoute:
            return self._fault(Fault(404, NOT_FOUND_MESSAGE), None, mount)
        except ApiError as exc:
            return self._fault(exc.fault, exc.version, mount)
        except ComputeError as exc:
            return self._fault(fault_for(exc), version, mount)
        return self._reply(result, ep.status, version, mount)

    async def _authenticate(self, headers: dict[str, str], request_id: str) -> RequestContext:
        """Answer from the authenticator's cache on the loop; validate misses on a worker
        thread so a slow identity service never blocks other requests."""
        context = self.authenticator.authenticate_cached(headers, request_id)
        if context is not None:
            return context
        return await self._in_worker(self.authenticator.authenticate, headers, request_id)

    async def _in_worker(self, func: Callable[..., T], *args: Any) -> T:
        """``func(*args)`` on a worker thread, in a copy of this request's context."""
        run = contextvars.copy_context().run
        return await asyncio.get_running_loop().run_in_executor(self._executor, run, func, *args)

    def _match(self, rest: str) -> tuple[tuple[PathRoute, dict[str, str]] | None, str | None]:
        found = self.routes.match(rest)
        if found is not None:
            return found, None
        first, sep, remainder = rest[1:].partition("/")
        if PROJECT_ID_RE.match(first):
            found = self.routes.match("/" + remainder if sep else "/")
            if found is not None:
                return found, first
        return None, None

    @staticmethod
    def _version(mount: str, headers: dict[str, str]) -> APIVersion | None:
        if mount == "v2":
            return LEGACY_V2
        text = requested_version_text(
            _all(headers, "openstack-api-version"), _all(headers, "x-openstack-nova-api-version")
        )
        try:
            return negotiate(text)
        except InvalidVersionString as exc:
            raise ApiError(fault_for(exc)) from exc
        except VersionNotAcceptable as exc:
            raise ApiError(fault_for(exc), exc.requested) from exc

    def _build(
        self,
        scope: Scope,
        headers: dict[str, str],
        raw_body: bytes,
        route: PathRoute,
        params: dict[str, str],
        version: APIVersion | None,
        context: RequestContext,
    ) -> ApiRequest:
        served = version or LEGACY_V2
        ctype = headers.get("content-type", "").split(";")[0].strip().lower()
        if ctype and ctype != "text/plain" and ctype not in JSON_TYPES:
            raise ApiError(Fault(415, "Unsupported Content-Type"), version)
        method: str = scope["method"]
        body: Any = None
        if method in ("POST", "PUT") and raw_body.strip():
            try:
                body = orjson.loads(raw_body)
            except orjson.JSONDecodeError as exc:
                raise ApiError(Fault(400, "Malformed request body"), version) from exc
        query: dict[str, list[str]] = {}
        for key, value in parse_qsl(scope.get("query_string", b"").decode("latin-1"), True):
            query.setdefault(key, []).append(value)
        return ApiRequest(
            method=method,
            path=route.template,
            params=params,
            query=query,
            body=body,
            version=served,
            context=context,
            headers=headers,
            services=self.services,
        )

    @staticmethod
    def _endpoint(route: PathRoute, req: ApiRequest) -> Endpoint:
        if req.method == "POST" and route.has_actions:
            body = req.body
            if not isinstance(body, dict) or len(body) != 1:
                raise Invalid("Malformed request body")
            key = next(iter(body))
            candidates = route.action_endpoints(key)
            if candidates is None:
                raise Invalid(f"There is no such action: {key}")
        else:
            candidates = route.endpoints(req.method)
        if not candidates:
            raise NoRoute()
        for ep in candidates:
            if ep.removed:
                raise ApiError(Fault(410, GONE_MESSAGE), req.version)
            if ep.serves(req.version) and ep.not_built:
                raise ApiError(Fault(501, NOT_SUPPORTED_MESSAGE), req.version)
            if ep.serves(req.version):
                return ep
        raise ApiError(Fault(404, NOT_FOUND_MESSAGE), req.version)

    @staticmethod
    def _validate(ep: Endpoint, req: ApiRequest) -> None:
        if ep.query is not None:
            schema = ep.query.at(req.version)
            if schema is not None:
                req.query = schema.validate_query(req.query)
        if ep.body is not None:
            schema = ep.body.at(req.version)
            if schema is not None:
                schema.validate_body(req.body, relaxed=req.version == LEGACY_V2)

    def _fault(self, fault: Fault, version: APIVersion | None, mount: str) -> Outgoing:
        headers = _version_headers(version) if mount == "v2.1" else []
        return Outgoing(fault.status, fault.body(), FAULT_CONTENT_TYPE, headers)

    @staticmethod
    def _json(status: int, body: Any) -> Outgoing:
        return Outgoing(status, orjson.dumps(body), b"application/json", [])

    @staticmethod
    def _reply(result: Any, status: int, version: APIVersion | None, mount: str) -> Outgoing:
        extra: list[tuple[bytes, bytes]] = _version_headers(version) if mount == "v2.1" else []
        if isinstance(result, Reply):
            status = result.status or status
            extra += [(k.lower().encode(), v.encode()) for k, v in result.headers]
            result = result.body
        payload = b"" if result is None or status == 204 else orjson.dumps(result)
        return Outgoing(status, payload, b"application/json", extra)


def _call(ep: Endpoint, req: ApiRequest) -> Any:
    assert ep.handler is not None
    return ep.handler(req)


def _version_headers(version: APIVersion | None) -> list[tuple[bytes, bytes]]:
    if version is None:
        return []
    text = str(version).encode()
    return [
        (b"openstack-api-version", b"compute " + text),
        (b"x-openstack-nova-api-version", text),
        (b"vary", b"OpenStack-API-Version"),
        (b"vary", b"X-OpenStack-Nova-API-Version"),
    ]


def _unauthorized(exc: Unauthorized, base: str) -> Outgoing:
    """keystonemiddleware's 401: its JSON body and, under Keystone, where to authenticate."""
    body = orjson.dumps({"error": {"code": 401, "title": "Unauthorized", "message": exc.message}})
    headers: list[tuple[bytes, bytes]] = []
    uri = getattr(exc, "www_authenticate_uri", None)
    if isinstance(uri, str) and uri:
        headers.append((b"www-authenticate", f'Keystone uri="{uri}"'.encode()))
    return Outgoing(401, body, FAULT_CONTENT_TYPE, headers)


async def _read_body(receive: Receive) -> bytes:
    chunks: list[bytes] = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(chunks)


def _all(headers: dict[str, str], name: str) -> list[str]:
    value = headers.get(name)
    return [value] if value is not None else []


def _split_mount(path: str) -> tuple[str | None, str]:
    for mount in ("v2.1", "v2"):
        prefix = f"/{mount}"
        if path == prefix or path.startswith(prefix + "/"):
            return mount, path[len(prefix) :]
    return None, path
