"""The identity API as an ASGI wrapper: ``/identity...`` is answered here, the rest by
``fallback`` (the compute API and the image API in front of it).

The request path: prefix -> route (404 / 405) -> the caller's ``X-Auth-Token`` validated (401;
skipped for anonymous endpoints) -> body (1 MiB at most) -> handler on a worker thread (password
hashing and database reads block) -> JSON reply with ``X-Openstack-Request-Id``. Errors are
Keystone's JSON (:mod:`openkeel.identity_api.faults`); a 401 carries ``WWW-Authenticate``.
"""

from __future__ import annotations

import logging
import uuid
from typing import TypeVar
from urllib.parse import parse_qsl

import orjson

from openkeel.identity_api.faults import (
    IdentityFault,
    RequestEntityTooLarge,
    Unauthorized,
)
from openkeel.identity_api.request import PREFIX, IdentityRequest, Reply
from openkeel.identity_api.resources import admin, app_credentials, auth, discovery
from openkeel.identity_api.routing import RouteTable
from openkeel.identity_api.service import Caller, IdentityService
from openkeel.logcontext import LogContext, bound, set_current
from openkeel.runtime.asgi import base_url, scope_headers
from openkeel.runtime.asgi_apps import (
    ASGIApp,
    BodyTooLarge,
    PrefixedApp,
    Receive,
    Scope,
    Send,
    Workers,
    read_body,
)

LOG = logging.getLogger(__name__)

T = TypeVar("T")
BODY_LIMIT = 1024 * 1024


def build_routes() -> RouteTable:
    table = RouteTable()
    for module in (discovery, auth, admin, app_credentials):
        module.register(table)
    return table


class IdentityApiApp(PrefixedApp):
    """Serves ``PREFIX`` and hands every other request to ``fallback``."""

    prefix = PREFIX

    def __init__(self, fallback: ASGIApp, service: IdentityService, workers: int = 8) -> None:
        super().__init__(fallback, Workers(workers, "identity"))
        self.service = service
        self.routes = build_routes()

    async def serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        path: str = scope["path"]
        request_id = f"req-{uuid.uuid4()}"
        headers = scope_headers(scope)
        root = base_url(scope, headers)
        with bound(LogContext(request_id)):
            try:
                reply = await self._handle(scope, receive, headers, root)
            except Exception as exc:  # every error is answered in Keystone's format
                fault = exc if isinstance(exc, IdentityFault) else None
                if fault is None:
                    LOG.exception("%s %s failed", scope.get("method"), path)
                    fault = IdentityFault("An unexpected error prevented the server from "
                                          "fulfilling your request.")  # fmt: skip
                extra = list(fault.headers)
                if isinstance(fault, Unauthorized):
                    extra.append(("WWW-Authenticate", f'Keystone uri="{root}{PREFIX}"'))
                reply = Reply(fault.body(), fault.status, extra)
        await _send(send, scope, reply, request_id)

    async def _handle(
        self, scope: Scope, receive: Receive, headers: dict[str, str], root: str
    ) -> Reply:
        method: str = scope["method"]
        ep, params = self.routes.match(method, scope["path"][len(PREFIX) :] or "/", scope)
        req = IdentityRequest(
            method=method,
            params=params,
            query=parse_qsl(scope.get("query_string", b"").decode("latin-1"), True),
            headers=headers,
            service=self.service,
            root=root,
            body=await _read_body(receive),
        )
        if not ep.anonymous:
            token = headers.get("x-auth-token", "").strip()
            caller: Caller = await self.workers.run(self.service.validate, token)
            set_current(LogContext(headers.get("x-openstack-request-id", ""), caller.user.id,
                                   caller.project.id if caller.project else None))  # fmt: skip
            req._caller = caller
        return await self.workers.run(ep.handler, req)


async def _send(send: Send, scope: Scope, reply: Reply, request_id: str) -> None:
    headers = [(b"x-openstack-request-id", request_id.encode())]
    headers += [(k.lower().encode(), v.encode()) for k, v in reply.headers]
    body = b""
    if reply.body is not None:
        body = orjson.dumps(reply.body)
        headers += [(b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode())]  # fmt: skip
    elif reply.status != 204:
        headers.append((b"content-length", b"0"))
    if scope.get("method") == "HEAD":
        body = b""
    await send({"type": "http.response.start", "status": reply.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _read_body(receive: Receive) -> bytes:
    try:
        return await read_body(receive, BODY_LIMIT)
    except BodyTooLarge as exc:
        raise RequestEntityTooLarge("Request is too large.") from exc


def build_identity_app(fallback: ASGIApp, service: IdentityService) -> IdentityApiApp:
    """The identity API in front of ``fallback``."""
    return IdentityApiApp(fallback, service)
