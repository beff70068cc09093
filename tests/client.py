"""A synchronous test client for the ASGI compute API (no network, no server).

The app runs on an event loop in a background thread, as under uvicorn, so the thread-pool
dispatch inside the app is exercised exactly as in production. As uvicorn does, the client runs
the app's ASGI lifespan: startup when made, shutdown on ``close()`` (the app then stops its
worker threads, which the leak check of tests/leaks.py would otherwise find left behind).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

import httpx

from tests import leaks

T = TypeVar("T")


class ApiClient:
    """``client.get("/v2.1/flavors", version="2.55", token="demo:demo")`` and friends."""

    def __init__(
        self,
        app: Any,
        base_url: str = "http://openkeel.test",
        client: tuple[str, int] = ("127.0.0.1", 123),
    ) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        # ``client``: the peer address the app sees (the metadata service identifies by it).
        self._client = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app, client=client), base_url=base_url
        )
        self._lifespan = _Lifespan(app)
        self._run(self._lifespan.start())
        # The app starts worker threads on demand, and a module fixture's client serves many
        # tests: they are this client's until close() (which ends them) for the leak check.
        self._owner = leaks.owned_by("an open ApiClient's app workers", list, lambda: _workers(app))

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
        self._run(self._lifespan.stop())
        leaks.released(self._owner)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)
        self._loop.close()


def _workers(app: Any) -> list[threading.Thread]:
    """The worker threads of the app (ComputeApiApp's executor, the image and identity APIs'
    Workers)."""
    workers = getattr(app, "workers", None)
    if workers is not None:
        return list(workers.threads)
    executor = getattr(app, "_executor", None)
    return list(getattr(executor, "_threads", ()))


class _Lifespan:
    """The ASGI lifespan protocol, as a server runs it around the requests it serves."""

    def __init__(self, app: Any) -> None:
        self._app = app
        self._inbox: asyncio.Queue[dict[str, str]] = asyncio.Queue()
        self._outbox: asyncio.Queue[dict[str, str]] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        try:
            await self._app({"type": "lifespan"}, self._inbox.get, self._outbox.put)
        finally:
            await self._outbox.put({"type": "lifespan.ended"})  # apps without lifespan

    async def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())
        await self._inbox.put({"type": "lifespan.startup"})
        await self._outbox.get()

    async def stop(self) -> None:
        if self._task is None or self._task.done():
            return
        await self._inbox.put({"type": "lifespan.shutdown"})
        await self._outbox.get()
        await self._task
