"""Byte streams to a guest's console endpoint, as the console proxies relay them.

A driver's ConsoleInfo names a host, a port and maybe an internal access path. By default the
endpoint is plain TCP (a VNC server or a serial line), where an internal access path is asked
for first with an HTTP ``CONNECT`` (as Nova's proxy does). A driver whose consoles are
something else (KubeVirt: websocket subresources of the API server) gives its own opener
(:func:`openkeel.virt.loading.console_opener`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Protocol

CHUNK = 65536


class GuestStream(Protocol):
    """One open console connection."""

    async def read(self) -> bytes:
        """The next bytes from the guest (b"": it ended)."""
        ...

    async def write(self, data: bytes) -> None: ...

    async def close(self) -> None: ...


class EndpointRefused(ConnectionError):
    """The console endpoint refused the connection (a CONNECT or websocket answer)."""


class TcpStream:
    """A TCP console endpoint."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader, self._writer = reader, writer

    async def read(self) -> bytes:
        return await self._reader.read(CHUNK)

    async def write(self, data: bytes) -> None:
        self._writer.write(data)
        await self._writer.drain()

    async def close(self) -> None:
        self._writer.close()
        with contextlib.suppress(ConnectionError, OSError):
            await self._writer.wait_closed()


async def open_tcp(host: str, port: int, internal_access_path: str | None) -> GuestStream:
    """A TCP connection to the console, past its CONNECT when there is a path."""
    reader, writer = await asyncio.open_connection(host, port)
    stream = TcpStream(reader, writer)
    if internal_access_path:
        writer.write(f"CONNECT {internal_access_path} HTTP/1.1\r\n\r\n".encode())
        await writer.drain()
        status = (await reader.readuntil(b"\r\n\r\n")).split(b"\r\n", 1)[0]
        if b"200" not in status:
            await stream.close()
            raise EndpointRefused(status.decode("latin-1"))
    return stream


ConsoleOpener = Callable[[str, int, str | None], Awaitable[GuestStream]]
