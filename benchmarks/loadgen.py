"""A small keep-alive HTTP/1.1 load generator on asyncio streams, for the benchmarks.

Used by benchmarks/foundation.py. One persistent connection per simulated client, raw
request bytes, Content-Length or chunked bodies. Much cheaper per request than httpx or
requests, so on a 2-core machine the client steals as little CPU from the servers as it can.
Runs of requests are bounded both by a count and by a deadline.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import orjson


@dataclass(frozen=True)
class Call:
    """One request: method, path (absolute, from the host root), optional JSON body."""

    method: str
    path: str
    body: object | None = None


@dataclass
class Response:
    """What a call returned."""

    status: int
    body: bytes
    close: bool = False

    def json(self) -> object:
        return orjson.loads(self.body)


class Connection:
    """One keep-alive HTTP/1.1 connection to a server."""

    def __init__(self, url: str, headers: dict[str, str]) -> None:
        parts = urlsplit(url)
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or 80
        self.prefix = parts.path.rstrip("/")
        fixed = {"Host": f"{self.host}:{self.port}", "Accept": "application/json", **headers}
        self._fixed = "".join(f"{k}: {v}\r\n" for k, v in fixed.items()).encode()
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    async def _open(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        if self._reader is None or self._writer is None or self._writer.is_closing():
            self._reader, self._writer = await asyncio.open_connection(self.host, self.port)
        return self._reader, self._writer

    async def request(self, call: Call) -> Response:
        """Send ``call`` (path relative to the URL's path) and read the whole response."""
        payload = b"" if call.body is None else orjson.dumps(call.body)
        head = f"{call.method} {self.prefix}{call.path} HTTP/1.1\r\n".encode() + self._fixed
        if call.body is not None:
            head += b"Content-Type: application/json\r\n"
        head += b"Content-Length: %d\r\n\r\n" % len(payload)
        reused = self._writer is not None
        try:
            reader, writer = await self._open()
            writer.write(head + payload)
            resp = await _read_response(reader)
        except (asyncio.IncompleteReadError, ConnectionError):
            self.close()
            if not reused:
                raise
            # the server dropped an idle keep-alive connection: one retry on a fresh one
            reader, writer = await self._open()
            writer.write(head + payload)
            resp = await _read_response(reader)
        if resp.close:  # e.g. gunicorn's sync workers: one request per connection
            self.close()
        return resp

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
        self._reader = self._writer = None


async def _read_response(reader: asyncio.StreamReader) -> Response:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ", 2)[1])
    length, chunked, close = 0, False, False
    for line in lines[1:]:
        name, _, value = line.partition(":")
        name = name.strip().lower()
        if name == "content-length":
            length = int(value)
        elif name == "transfer-encoding" and "chunked" in value.lower():
            chunked = True
        elif name == "connection" and "close" in value.lower():
            close = True
    if chunked:
        return Response(status, await _read_chunked(reader), close)
    return Response(status, await reader.readexactly(length) if length else b"", close)


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    parts: list[bytes] = []
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
        if size == 0:
            await reader.readuntil(b"\r\n")
            return b"".join(parts)
        parts.append(await reader.readexactly(size))
        await reader.readexactly(2)


@dataclass
class RunResult:
    """Outcome of a bounded run: per-request latencies (s), wall time, failures."""

    latencies: list[float] = field(default_factory=list)
    wall: float = 0.0
    errors: int = 0
    first_error: str = ""
    cut_by_deadline: bool = False

    @property
    def count(self) -> int:
        return len(self.latencies)

    @property
    def rate(self) -> float:
        return self.count / self.wall if self.wall else 0.0

    def percentile(self, pct: float) -> float:
        """Latency percentile in ms (nearest-rank)."""
        if not self.latencies:
            return float("nan")
        ordered = sorted(self.latencies)
        rank = max(0, min(len(ordered) - 1, round(pct / 100 * len(ordered) + 0.5) - 1))
        return ordered[rank] * 1000

    def summary(self) -> dict[str, float | int | bool]:
        return {
            "count": self.count,
            "errors": self.errors,
            "wall_s": round(self.wall, 3),
            "per_s": round(self.rate, 1),
            "p50_ms": round(self.percentile(50), 2),
            "p99_ms": round(self.percentile(99), 2),
            "mean_ms": round(statistics.fmean(self.latencies) * 1000, 2) if self.latencies else 0,
            "cut_by_deadline": self.cut_by_deadline,
        }


async def run_bounded(
    conns: list[Connection],
    calls: Callable[[int], Call],
    total: int,
    deadline_s: float,
    ok: Callable[[Response], bool] = lambda r: 200 <= r.status < 300,
) -> RunResult:
    """Issue ``calls(0..total-1)`` from ``len(conns)`` concurrent clients; stop at the deadline."""
    result = RunResult()
    counter = iter(range(total))
    start = time.perf_counter()
    stop_at = start + deadline_s

    async def client(conn: Connection) -> None:
        for i in counter:
            if time.perf_counter() > stop_at:
                result.cut_by_deadline = True
                return
            t0 = time.perf_counter()
            resp = await conn.request(calls(i))
            if ok(resp):
                result.latencies.append(time.perf_counter() - t0)
            else:
                result.errors += 1
                result.first_error = result.first_error or f"{resp.status} {resp.body[:200]!r}"

    await asyncio.gather(*(client(c) for c in conns))
    result.wall = time.perf_counter() - start
    return result
