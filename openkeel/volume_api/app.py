"""The volume API as an ASGI wrapper: ``/volume...`` is answered here, the rest by
``fallback``.

Request path: prefix -> an optional project id after ``/v3`` dropped (Cinder serves both URL
forms) -> route (404 / 405) -> microversion (``OpenStack-API-Version: volume 3.x``; 400 / 406)
-> caller from the headers by ``identify`` (the compute API's authenticator; 401) -> body
(1 MiB) -> handler on a worker thread -> JSON with the version headers. Errors are Cinder's
fault documents (:mod:`openkeel.volume.embedded.faults`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from openkeel.domain.errors import Unauthorized
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
from openkeel.volume.embedded.faults import OverLimit, VolumeFault
from openkeel.volume.embedded.service import Caller, VolumeService
from openkeel.volume_api.request import PREFIX, Reply, VolumeRequest, negotiate, text
from openkeel.volume_api.resources import (
    attachments,
    discovery,
    metadata,
    snapshots,
    types,
    volumes,
)
from openkeel.volume_api.routing import RouteTable

# (lower-cased headers, request id) -> the caller; raises domain Unauthorized. May block.
Identify = Callable[[dict[str, str], str], Caller]
_PROJECT = re.compile(r"^/v3/([0-9a-f]{32}|[0-9a-f-]{36})(/|$)")


def build_routes() -> RouteTable:
    table = RouteTable()
    for module in (discovery, volumes, snapshots, attachments, metadata, types):
        module.register(table)
    return table


def route_path(path: str) -> str:
    """The path below the prefix, without a project id after ``/v3``."""
    found = _PROJECT.match(path)
    return "/v3" + path[found.end(1) :] if found else path


class VolumeApiApp(JsonServiceApp):
    """Serves ``PREFIX`` and hands every other request to ``fallback``."""

    prefix = PREFIX

    def __init__(
        self, fallback: ASGIApp, service: VolumeService, identify: Identify, workers: int = 8
    ) -> None:
        super().__init__(fallback, Workers(workers, "volume-api"))
        self.service = service
        self.identify = identify
        self.routes = build_routes()

    def fault(self, exc: Exception) -> tuple[int, Any]:
        if isinstance(exc, Unauthorized):
            return 401, {"error": {"code": 401, "title": "Unauthorized", "message":
                                   "The request you have made requires authentication."}}  # fmt: skip
        if not isinstance(exc, VolumeFault):
            exc = VolumeFault("The server has either erred or is incapable of performing the "
                              "requested operation.")  # fmt: skip
        return exc.status, exc.body()

    def reply_headers(self, headers: dict[str, str]) -> list[tuple[bytes, bytes]]:
        """The version served, on every answer whose request asked for a valid one."""
        try:
            version = negotiate(headers)
        except VolumeFault:
            return []
        return [(b"openstack-api-version", f"volume {text(version)}".encode()),
                (b"vary", b"OpenStack-API-Version")]  # fmt: skip

    async def handle(
        self, scope: Scope, receive: Receive, headers: dict[str, str], request_id: str
    ) -> tuple[int, Any]:
        version = negotiate(headers)
        method: str = scope["method"]
        path = route_path(scope["path"][len(PREFIX) :] or "/")
        ep, params = self.routes.match(method, path)
        try:
            body = await read_body(receive, 1024 * 1024)
        except BodyTooLarge as exc:
            raise OverLimit("Request is too large.") from exc
        req = VolumeRequest(
            method=method,
            params=params,
            query=query_of(scope),
            headers=headers,
            service=self.service,
            root=base_url(scope, headers),
            version=version,
            body=body,
        )
        if not ep.anonymous:
            req.caller = await self.caller(self.identify, headers, request_id)
        reply: Reply = await self.workers.run(ep.handler, req)
        return reply.status, reply.body


def build_volume_app(fallback: ASGIApp, service: VolumeService, identify: Identify) -> Any:
    """The volume API in front of ``fallback``."""
    return VolumeApiApp(fallback, service, identify)
