"""The byte pipe between a console websocket and the guest's console endpoint.

Called by the proxy app once the token and Origin checked out, with the endpoint already open
(openkeel.virt.console_stream). Copies bytes both ways until either side ends (or the token
expires, with ``[consoleauth] enforce_session_timeout``). The ``base64`` subprotocol (old
noVNC) sends text frames of base64; otherwise binary frames.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from openkeel.virt.console_stream import GuestStream

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


async def _to_guest(receive: Receive, guest: GuestStream, b64: bool) -> None:
    while True:
        message = await receive()
        if message["type"] == "websocket.disconnect":
            return
        data = message.get("bytes")
        if data is None:
            text = message.get("text") or ""
            data = base64.b64decode(text) if b64 else text.encode()
        await guest.write(data)


async def _to_user(guest: GuestStream, send: Send, b64: bool) -> None:
    while data := await guest.read():
        if b64:
            await send({"type": "websocket.send", "text": base64.b64encode(data).decode()})
        else:
            await send({"type": "websocket.send", "bytes": data})


async def relay(
    receive: Receive, send: Send, guest: GuestStream, b64: bool, lifetime: float | None
) -> None:
    """Copy both ways until one side ends or ``lifetime`` seconds pass; then close both."""
    tasks = [
        asyncio.ensure_future(_to_guest(receive, guest, b64)),
        asyncio.ensure_future(_to_user(guest, send, b64)),
    ]
    try:
        await asyncio.wait(tasks, timeout=lifetime, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, ConnectionError, OSError):
                await task
        with contextlib.suppress(ConnectionError, OSError):
            await guest.close()
        with contextlib.suppress(ConnectionError, OSError, RuntimeError):
            await send({"type": "websocket.close", "code": 1000})
