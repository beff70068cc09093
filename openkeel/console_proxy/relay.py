"""The byte pipe between a console websocket and the guest's console endpoint.

Called by the proxy app once the token and Origin checked out. Connects to the endpoint the
token names; when the token carries an ``internal_access_path`` it first asks for it with an
HTTP ``CONNECT`` (as Nova's proxy does) and needs a 200. Then copies bytes both ways until
either side ends (or the token expires, with ``[consoleauth] enforce_session_timeout``). The
``base64`` subprotocol (old noVNC) sends text frames of base64; otherwise binary frames.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
CHUNK = 65536


class EndpointRefused(ConnectionError):
    """The console endpoint refused the CONNECT to its internal access path."""


async def open_endpoint(
    host: str, port: int, internal_access_path: str | None
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A connection to the guest's console, past its CONNECT when there is one."""
    reader, writer = await asyncio.open_connection(host, port)
    if internal_access_path:
        writer.write(f"CONNECT {internal_access_path} HTTP/1.1\r\n\r\n".encode())
        await writer.drain()
        head = await reader.readuntil(b"\r\n\r\n")
        if b"200" not in head.split(b"\r\n", 1)[0]:
            writer.close()
            raise EndpointRefused(head.split(b"\r\n", 1)[0].decode("latin-1"))
    return reader, writer


async def _to_guest(receive: Receive, writer: asyncio.StreamWriter, b64: bool) -> None:
    while True:
        message = await receive()
        if message["type"] == "websocket.disconnect":
            return
        data = message.get("bytes")
        if data is None:
            text = message.get("text") or ""
            data = base64.b64decode(text) if b64 else text.encode()
        writer.write(data)
        await writer.drain()


async def _to_user(reader: asyncio.StreamReader, send: Send, b64: bool) -> None:
    while data := await reader.read(CHUNK):
        if b64:
            await send({"type": "websocket.send", "text": base64.b64encode(data).decode()})
        else:
            await send({"type": "websocket.send", "bytes": data})


async def relay(
    receive: Receive,
    send: Send,
    endpoint: tuple[asyncio.StreamReader, asyncio.StreamWriter],
    b64: bool,
    lifetime: float | None,
) -> None:
    """Copy both ways until one side ends or ``lifetime`` seconds pass; then close both."""
    reader, writer = endpoint
    tasks = [
        asyncio.ensure_future(_to_guest(receive, writer, b64)),
        asyncio.ensure_future(_to_user(reader, send, b64)),
    ]
    try:
        await asyncio.wait(tasks, timeout=lifetime, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, ConnectionError, OSError):
                await task
        writer.close()
        with contextlib.suppress(ConnectionError, OSError):
            await writer.wait_closed()
        with contextlib.suppress(ConnectionError, OSError, RuntimeError):
            await send({"type": "websocket.close", "code": 1000})
