"""The volume API as an ASGI wrapper: ``/volume...`` is answered here, the rest by
``fallback``.

Request path: prefix -> an optional project id after ``/v3`` dropped (Cinder serves both URL
forms) -> route (404 / 405) -> microversion (``OpenStack-API-Version: volume 3.x``; 400 / 406)
-> caller from the headers by ``identify`` (the compute API's authenticator; 401) -> body
(1 MiB) -> handler on a worker thread -> JSON with the version headers. Errors are Cinder's
fault documents (:mod:`openkeel.volume.embedded.faults`).
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl

from openkeel.domain.errors import Unauthorized
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
    send_json,
)
from openkeel.volume.embedded.faults import OverLimit, VolumeFault
from openkeel.volume.embedded.service import Caller, VolumeService
from openkeel.volume_api.request import PREFIX, Reply, VolumeRequest, negotiate, text
from openkeel.volume_api.resources import attachments, discovery, metadata, snapshots, volumes
from openkeel.volume_api.routing import RouteTable

LOG = logging.getLogger(__name__)
# (lower-cased headers, request id) -> the caller; raises domain Unauthorized. May block.
Identify = Callable[[dict[str, str], str], Caller]
_PROJECT = re.compile(r"^/v3/([0-9a-f]{32}|[0-9a-f-]{36})(/|$)")


def build_routes() -> RouteTable:
    table = RouteTable()
    for module in (discovery, volumes, snapshots, attachments, metadata):
        module.register(table)
    return table


def route_path(path: str) -> str:
    """The path below the prefix, without a project id after ``/v3``."""
    found = _PROJECT.match(path)
    return "/v3" + path[found.end(1) :] if found else path


class VolumeApiApp(PrefixedApp):
    """Serves ``PREFIX`` and hands every other request to ``fallback``."""

    prefix = PREFIX

    def __init__(
        self, fallback: ASGIApp, service: VolumeService, identify: Identify, workers: int = 8
    ) -> None:
        super().__init__(fallback, Workers(workers, "volume-api"))
        self.service = service
        self.identify = identify
        self.routes = build_routes()

    async def serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        request_id = f"req-{uuid.uuid4()}"
        headers = scope_headers(scope)
        version = None
        with bound(LogContext(request_id)):
            try:
                version = negotiate(headers)
                reply = await self._handle(scope, receive, headers, request_id, version)
            except Unauthorized:
                reply = Reply({"error": {"code": 401, "title": "Unauthorized", "message":
                               "The request you have made requires authentication."}}, 401)  # fmt: skip
            except VolumeFault as fault:
                reply = Reply(fault.body(), fault.status)
            except Exception:
                LOG.exception("%s %s failed", scope.get("method"), scope.get("path"))
                reply = Reply(VolumeFault("The server has either erred or is incapable of "
                                          "performing the requested operation.").body(), 500)  # fmt: skip
        await _send(send, scope, reply, request_id, version)

    async def _handle(
        self,
        scope: Scope,
        receive: Receive,
        headers: dict[str, str],
        request_id: str,
        version: tuple[int, int],
    ) -> Reply:
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
            query=parse_qsl(scope.get("query_string", b"").decode("latin-1"), True),
            headers=headers,
            service=self.service,
            root=base_url(scope, headers),
            version=version,
            body=body,
        )
        if not ep.anonymous:
            req.caller = await self.workers.run(self.identify, headers, request_id)
            set_current(LogContext(request_id, None, req.caller.project_id))
        return await self.workers.run(ep.handler, req)


async def _send(
    send: Send, scope: Scope, reply: Reply, request_id: str, version: tuple[int, int] | None
) -> None:
    headers = []
    if version is not None:
        headers.append((b"openstack-api-version", f"volume {text(version)}".encode()))
        headers.append((b"vary", b"OpenStack-API-Version"))
    await send_json(send, scope, reply.status, reply.body, request_id, headers)


def build_volume_app(fallback: ASGIApp, service: VolumeService, identify: Identify) -> Any:
    """The volume API in front of ``fallback``."""
    return VolumeApiApp(fallback, service, identify)
