"""The console proxy as an ASGI app: the websocket relay and, for noVNC, its web page.

Served by ``openkeel novncproxy`` / ``openkeel serialproxy`` and by the all-in-one (one app
per proxy, each on its own port). A websocket's token comes from the query (``?token=``, as
noVNC sends the ``path`` it was given) or a ``token`` cookie; an unknown, expired or no longer
valid token, or a refused Origin, closes the handshake (the client sees HTTP 403). HTTP GETs
are files of the noVNC directory (``[DEFAULT] web``) when the proxy serves one, and a page of
our own (vnc_page) where that directory has noVNC's library but not its page.
"""

from __future__ import annotations

import asyncio
import logging
import mimetypes
import time
from collections.abc import Callable, Sequence
from http.cookies import CookieError, SimpleCookie
from pathlib import Path
from urllib.parse import parse_qs, unquote

from openkeel.console_proxy import vnc_page
from openkeel.console_proxy.authorization import ConsoleAuthorizer
from openkeel.console_proxy.origin import origin_refusal
from openkeel.console_proxy.relay import Receive, Send, relay
from openkeel.db.repositories.console_auth_tokens import ConsoleAuthorization
from openkeel.runtime.asgi import Scope, scope_headers
from openkeel.virt.console_stream import ConsoleOpener, open_tcp

LOG = logging.getLogger(__name__)
SUBPROTOCOLS = ("binary", "base64")


def request_token(scope: Scope, headers: dict[str, str]) -> str:
    """The token of a websocket request: ``?token=`` first, else the ``token`` cookie."""
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    token: str = (query.get("token") or [""])[-1]
    if token or "cookie" not in headers:
        return token
    for part in headers["cookie"].split(";"):
        cookie: SimpleCookie = SimpleCookie()
        try:
            cookie.load(part.strip())
        except CookieError:
            LOG.warning("Found malformed cookie")
            continue
        if "token" in cookie:
            token = str(cookie["token"].value)
    return token


class ConsoleProxyApp:
    """One console proxy (noVNC or serial)."""

    def __init__(
        self,
        authorizer: ConsoleAuthorizer,
        allowed_origins: Sequence[str] = (),
        web: Path | None = None,
        enforce_session_timeout: bool = False,
        now: Callable[[], float] = time.time,
        opener: ConsoleOpener = open_tcp,
    ) -> None:
        self._authorizer = authorizer
        self._opener = opener
        self._allowed = list(allowed_origins)
        self._web = web if web is not None and web.is_dir() else None
        # The noVNC proxy (given a web directory, even a missing one) always has its page.
        self._serves_page = web is not None
        self._enforce_timeout = enforce_session_timeout
        self._now = now

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            await self._websocket(scope, receive, send)
        elif scope["type"] == "http":
            await self._file(scope, send)
        elif scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})

    async def _check(self, scope: Scope) -> ConsoleAuthorization | None:
        headers = scope_headers(scope)
        token = request_token(scope, headers)
        found = await asyncio.to_thread(self._authorizer.authorize, token)
        if found is None:
            LOG.info("Console connection refused: invalid token")
            return None
        refusal = origin_refusal(headers, self._allowed, found.target.access_url_base)
        if refusal is not None:
            LOG.info("Console connection refused: %s", refusal)
            return None
        return found

    async def _websocket(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (await receive())["type"] != "websocket.connect":
            return
        found = await self._check(scope)
        if found is None:
            await send({"type": "websocket.close", "code": 1008})
            return
        target = found.target
        try:
            guest = await self._opener(target.host, target.port, target.internal_access_path)
        except (OSError, asyncio.IncompleteReadError) as exc:
            LOG.warning("Console of %s unreachable: %s", target.instance_uuid, exc)
            await send({"type": "websocket.close", "code": 1011})
            return
        offered = scope.get("subprotocols") or []
        chosen = next((p for p in SUBPROTOCOLS if p in offered), None)
        await send({"type": "websocket.accept", "subprotocol": chosen})
        lifetime = found.expires - self._now() if self._enforce_timeout else None
        LOG.info("Console of %s opened (%s)", target.instance_uuid, target.console_type)
        await relay(receive, send, guest, chosen == "base64", lifetime)

    async def _file(self, scope: Scope, send: Send) -> None:
        url_path = unquote(scope.get("path", "/"))
        path = self._resolve(url_path)
        if path is None and self._serves_page and url_path in vnc_page.PAGE_NAMES:
            body = b"" if scope.get("method") == "HEAD" else vnc_page.PAGE
            await _answer(send, 200, body, "text/html")
            return
        if path is None or scope.get("method") not in ("GET", "HEAD"):
            await _answer(send, 404, b"Not Found", "text/plain")
            return
        kind = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        body = b"" if scope.get("method") == "HEAD" else await asyncio.to_thread(path.read_bytes)
        await _answer(send, 200, body, kind)

    def _resolve(self, url_path: str) -> Path | None:
        if self._web is None:
            return None
        root = self._web.resolve()
        candidate = (root / url_path.lstrip("/")).resolve()
        if candidate.is_dir():
            candidate = candidate / "index.html"
        if not candidate.is_relative_to(root) or not candidate.is_file():
            return None
        return candidate


async def _answer(send: Send, status: int, body: bytes, kind: str) -> None:
    headers = [(b"content-type", kind.encode()), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
