"""The network API as an ASGI wrapper: ``/networking...`` is answered here, the rest by
``fallback``.

Request path: prefix -> route (404 / 405) -> caller from the headers by ``identify`` (the
compute API's authenticator, so one token cache serves all; 401 as keystonemiddleware words it)
-> body (1 MiB) -> handler on a worker thread -> JSON. Errors are Neutron's
``NeutronError`` documents (:mod:`openkeel.network.embedded.faults`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from openkeel.domain.errors import Unauthorized
from openkeel.network.embedded.faults import NetworkFault, RequestEntityTooLarge
from openkeel.network.embedded.service import Caller, NetworkService
from openkeel.network_api.request import PREFIX, NetworkRequest, Reply
from openkeel.network_api.resources import (
    auto_allocate,
    core,
    discovery,
    port_bindings,
    qos_rules,
)
from openkeel.network_api.routing import RouteTable
from openkeel.runtime.asgi import base_url
from openkeel.runtime.asgi_apps import (
    ASGIApp,
    BodyTooLarge,
    JsonServiceApp,
    Receive,
    Scope,
    Workers,
    query_of,
    read_body,
)

# (lower-cased headers, request id) -> the caller; raises domain Unauthorized. May block.
Identify = Callable[[dict[str, str], str], Caller]
AUTH_REQUIRED = "The request you have made requires authentication."


def build_routes() -> RouteTable:
    table = RouteTable()
    for module in (discovery, core, port_bindings, qos_rules, auto_allocate):
        module.register(table)
    return table


class NetworkApiApp(JsonServiceApp):
    """Serves ``PREFIX`` and hands every other request to ``fallback``."""

    prefix = PREFIX

    def __init__(
        self, fallback: ASGIApp, service: NetworkService, identify: Identify, workers: int = 8
    ) -> None:
        super().__init__(fallback, Workers(workers, "network-api"))
        self.service = service
        self.identify = identify
        self.routes = build_routes()

    def fault(self, exc: Exception) -> tuple[int, Any]:
        if isinstance(exc, Unauthorized):
            return 401, {"error": {"code": 401, "title": "Unauthorized", "message": AUTH_REQUIRED}}
        if not isinstance(exc, NetworkFault):
            exc = NetworkFault("Request Failed: internal server error while processing your "
                               "request.")  # fmt: skip
        return exc.status, exc.body()

    async def handle(
        self, scope: Scope, receive: Receive, headers: dict[str, str], request_id: str
    ) -> tuple[int, Any]:
        method: str = scope["method"]
        ep, params = self.routes.match(method, scope["path"][len(PREFIX) :] or "/", scope)
        try:
            body = await read_body(receive, 1024 * 1024)
        except BodyTooLarge as exc:
            raise RequestEntityTooLarge("Request Entity Too Large") from exc
        req = NetworkRequest(
            method=method,
            params=params,
            query=query_of(scope),
            headers=headers,
            service=self.service,
            root=base_url(scope, headers),
            body=body,
        )
        if not ep.anonymous:
            req.caller = await self.caller(self.identify, headers, request_id)
        reply: Reply = await self.workers.run(ep.handler, req)
        return reply.status, reply.body


def build_network_app(fallback: ASGIApp, service: NetworkService, identify: Identify) -> Any:
    """The network API in front of ``fallback``."""
    return NetworkApiApp(fallback, service, identify)
