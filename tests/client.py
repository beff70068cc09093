"""A synchronous test client for the ASGI compute API (no network, no server).

The app runs on an event loop in a background thread, as under uvicorn, so the thread-pool
dispatch inside the app is exercised exactly as in production.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

import httpx

T = TypeVar("T")


class ApiClient:
    """``client.get("/v2.1/flavors", version="2.55", token="demo:demo")`` and friends."""

    def __init__(self, app: Any, base_url: str = "http://openkeel.test") -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self._client = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=base_url)

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout=60)

    def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        content: bytes | str | None = None,
        version: str | None = None,
        token: str | None = "admin:admin",
        headers: dict[str, str] | None = None,
        params: Any = None,
    ) -> httpx.Response:
        """Send one request; ``version`` sets ``OpenStack-API-Version: compute <version>``."""
        hdrs = dict(headers or {})
        if version is not None:
            hdrs["OpenStack-API-Version"] = f"compute {version}"
        if token is not None:
            hdrs.setdefault("X-Auth-Token", token)
        if not path.startswith("/"):
            path = "/v2.1/" + path
        return self._run(
            self._client.request(
                method, path, json=json, content=content, headers=hdrs, params=params
            )
        )

    def get(self, path: str, **kw: Any) -> httpx.Response:
        return self.request("GET", path, **kw)

    def post(self, path: str, json: Any = None, **kw: Any) -> httpx.Response:
        return self.request("POST", path, json=json, **kw)

    def put(self, path: str, json: Any = None, **kw: Any) -> httpx.Response:
        return self.request("PUT", path, json=json, **kw)

    def delete(self, path: str, **kw: Any) -> httpx.Response:
        return self.request("DELETE", path, **kw)

    def close(self) -> None:
        self._run(self._client.aclose())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)
        self._loop.close()
