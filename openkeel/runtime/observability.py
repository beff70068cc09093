"""Health check and Prometheus metrics of a role (decision 0061).

``Observed`` wraps an HTTP role's whole ASGI app (the compute API with the image, identity,
network and metadata APIs it may serve under ``/image``, ``/identity``, ``/networking`` and
``/metadata``; the metadata role on its own port):

- ``GET|HEAD /healthcheck`` (also under each of those prefixes) answers as oslo.middleware's
  healthcheck with its ``disable_by_file`` backend: 200 ``OK`` (text/plain, or
  ``{"detailed": false, "reasons": ["OK"]}`` when JSON is asked for), 204 to HEAD; 503
  ``DISABLED BY FILE`` while the file ``[healthcheck] disable_by_file_path`` exists.
- ``GET /metrics`` is the Prometheus text exposition of the process (``[metrics] enabled``).
- every other request is passed on and counted per API, method, route template (the app sets
  ``scope[ROUTE_KEY]`` when it matched one) and status, with its latency.

``start_metrics_server`` serves ``/metrics`` on ``[metrics] port`` for the roles without HTTP
(conductor, scheduler, compute) or beside the API.
"""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import orjson
from oslo_config import cfg

from openkeel import metrics

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

ROUTE_KEY = "openkeel.route"
"""Scope key where an app leaves the route template it matched (the metrics' route label)."""

HEALTH_PATH = "/healthcheck"
METRICS_PATH = "/metrics"
# Path prefix -> the API label; anything else is the compute API.
API_PREFIXES = (
    ("/image", "image"),
    ("/identity", "identity"),
    ("/networking", "network"),
    ("/metadata", "metadata"),
)
UNMATCHED = "unmatched"


class Observed:
    """``app`` with ``/healthcheck`` and ``/metrics``, and its requests measured."""

    def __init__(
        self,
        app: ASGIApp,
        disable_by_file_path: str | None,
        metrics_on: bool,
        default_api: str = "compute",
    ) -> None:
        self.app = app
        self.default_api = default_api
        self.disable_by_file_path = disable_by_file_path
        self.metrics_on = metrics_on
        self._health_paths = {HEALTH_PATH} | {p + HEALTH_PATH for p, _ in API_PREFIXES}

    def __getattr__(self, name: str) -> Any:
        # Transparent for whoever looks inside the app it wraps (its workers, its services).
        return getattr(self.app, name)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        if path in self._health_paths and scope["method"] in ("GET", "HEAD"):
            await self._health(scope, send)
            return
        if path == METRICS_PATH and scope["method"] == "GET" and self.metrics_on:
            body, ctype = metrics.exposition()
            await _reply(send, 200, ctype.encode(), body)
            return
        if not self.metrics_on:
            await self.app(scope, receive, send)
            return
        await self._measured(scope, receive, send)

    async def _measured(self, scope: Scope, receive: Receive, send: Send) -> None:
        start = time.perf_counter()
        status = 500

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            metrics.observe_request(
                api_of(scope["path"], self.default_api),
                scope["method"],
                scope.get(ROUTE_KEY, UNMATCHED),
                status,
                time.perf_counter() - start,
            )

    async def _health(self, scope: Scope, send: Send) -> None:
        disabled = bool(self.disable_by_file_path) and os.path.exists(
            self.disable_by_file_path or ""
        )
        reason = "DISABLED BY FILE" if disabled else "OK"
        if scope["method"] == "HEAD":
            await _reply(send, 503 if disabled else 204, b"text/plain; charset=UTF-8", b"")
            return
        status = 503 if disabled else 200
        if _wants_json(scope):
            body = orjson.dumps(
                {"detailed": False, "reasons": [reason]}, option=orjson.OPT_INDENT_2
            )
            await _reply(send, status, b"application/json", body)
        else:
            await _reply(send, status, b"text/plain; charset=UTF-8", reason.encode())


def observed(app: ASGIApp, conf: cfg.ConfigOpts, default_api: str = "compute") -> Observed:
    """``app`` wrapped as the configuration says (``default_api``: the label of the paths
    outside the known prefixes)."""
    return Observed(app, conf.healthcheck.disable_by_file_path, conf.metrics.enabled, default_api)


def api_of(path: str, default: str = "compute") -> str:
    """The API a path belongs to (the ``api`` label)."""
    for prefix, name in API_PREFIXES:
        if path.startswith(prefix) and (len(path) == len(prefix) or path[len(prefix)] == "/"):
            return name
    return default


def start_metrics_server(conf: cfg.ConfigOpts) -> Any:
    """Serve ``/metrics`` on ``[metrics] port`` on a daemon thread; None when not configured.
    Returns prometheus-client's (server, thread)."""
    if not conf.metrics.enabled or not conf.metrics.port:
        return None
    from prometheus_client import start_http_server

    return start_http_server(conf.metrics.port, addr=conf.metrics.host)


def _wants_json(scope: Scope) -> bool:
    for name, value in scope["headers"]:
        if name.lower() == b"accept":
            return b"application/json" in value and b"text/plain" not in value
    return False


async def _reply(send: Send, status: int, ctype: bytes, body: bytes) -> None:
    headers = [(b"content-type", ctype), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
