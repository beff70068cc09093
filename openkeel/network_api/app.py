"""The network API as an ASGI wrapper: ``/networking...`` is answered here, the rest by
``fallback``.

Request path: prefix -> route (404 / 405) -> caller from the headers by ``identify`` (the
compute API's authenticator, so one token cache serves all; 401 as keystonemiddleware words it)
-> body (1 MiB) -> handler on a worker thread -> JSON. Errors are Neutron's
``NeutronError`` documents (:mod:`openkeel.network.embedded.faults`).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl

from openkeel.domain.errors import Unauthorized
from openkeel.logcontext import LogContext, bound, set_current
from openkeel.network.embedded.faults import NetworkFault, RequestEntityTooLarge
from openkeel.network.embedded.service import Caller, NetworkService
from openkeel.network_api.request import PREFIX, NetworkRequest, Reply
from openkeel.network_api.resources import core, discovery
from openkeel.network_api.routing import RouteTable
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
    send_json,
)

LOG = logging.getLogger(__name__)
# (lower-cased headers, request id) -> the caller; raises domain Unauthorized. May block.
Identify = Callable[[dict[str, str], str], Caller]
AUTH_REQUIRED = "The request you have made requires authentication."


def build_routes() -> RouteTable:
    table = RouteTable()
    for module in (discovery, core):
        module.register(table)
    return table


class NetworkApiApp(PrefixedApp):
    """Serves ``PREFIX`` and hands every other request to ``fallback``."""

    prefix = PREFIX

    def __init__(
        self, fallback: ASGIApp, service: NetworkService, identify: Identify, workers: int = 8
    ) -> None:
        super().__init__(fallback, Workers(workers, "network-api"))
        self.service = service
        self.identify = identify
        self.routes = build_routes()

    async def serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        request_id = f"req-{uuid.uuid4()}"
        headers = scope_headers(scope)
        with bound(LogContext(request_id)):
            try:
                reply = await self._handle(scope, receive, headers, request_id)
            except Unauthorized:
                reply = Reply({"error": {"code": 401, "title": "Unauthorized",
                                         "message": AUTH_REQUIRED}}, 401)  # fmt: skip
            except NetworkFault as fault:
                reply = Reply(fault.body(), fault.status)
            except Exception:
                LOG.exception("%s %s failed", scope.get("method"), scope.get("path"))
                reply = Reply(NetworkFault("Request Failed: internal server error while "
                                           "processing your request.").body(), 500)  # fmt: skip
        await _send(send, scope, reply, request_id)

    async def _handle(
        self, scope: Scope, receive: Receive, headers: dict[str, str], request_id: str
    ) -> Reply:
        method: str = scope["method"]
        ep, params = self.routes.match(method, scope["path"][len(PREFIX) :] or "/", scope)
        try:
            body = await read_body(receive, 1024 * 1024)
        except BodyTooLarge as exc:
            raise RequestEntityTooLarge("Request Entity Too Large") from exc
        req = NetworkRequest(
            method=method,
            params=params,
            query=parse_qsl(scope.get("query_string", b"").decode("latin-1"), True),
            headers=headers,
            service=self.service,
            root=base_url(scope, headers),
            body=body,
        )
        if not ep.anonymous:
            req.caller = await self.workers.run(self.identify, headers, request_id)
            set_current(LogContext(request_id, None, req.caller.project_id))
        return await self.workers.run(ep.handler, req)


async def _send(send: Send, scope: Scope, reply: Reply, request_id: str) -> None:
    await send_json(send, scope, reply.status, reply.body, request_id)


def build_network_app(fallback: ASGIApp, service: NetworkService, identify: Identify) -> Any:
    """The network API in front of ``fallback``."""
    return NetworkApiApp(fallback, service, identify)
