"""The servers workload against one cloud: boot until ACTIVE, show, list, delete until 404.

Used by benchmarks/servers.py, which runs each phase on real Nova and on OpenKeel back to
back. Every phase is bounded by a count and a deadline. Status is polled with one cheap
``GET /servers?status=ACTIVE&name=^<prefix>`` at a bounded rate: the pause between polls is
``POLL_FACTOR`` times the last poll's latency, clamped to [POLL_MIN_S, POLL_MAX_S], so the
poller never takes more than ~1/6 of one API worker on either cloud.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from benchmarks import procstats
from benchmarks.loadgen import Call, Connection, Response, run_bounded
from benchmarks.workload import Cloud, conns, expect

POLL_FACTOR = 5.0
POLL_MIN_S = 0.02
POLL_MAX_S = 1.0
PAGE = 1000


@dataclass(frozen=True)
class BootSpec:
    """What every server of a run is booted with (``networks: none`` needs >= 2.37)."""

    image: str
    flavor: str
    version: str


@dataclass(frozen=True)
class Snapshot:
    """One poll: seconds since the first POST, servers ACTIVE, stack CPU seconds so far."""

    t: float
    active: int
    cpu_s: float


@dataclass
class BootRun:
    """Raw outcome of one boot phase."""

    posted: list[str] = field(default_factory=list)
    post_latencies: list[float] = field(default_factory=list)
    active_at: dict[str, float] = field(default_factory=dict)
    errored: set[str] = field(default_factory=set)
    snapshots: list[Snapshot] = field(default_factory=list)
    post_errors: int = 0
    first_error: str = ""
    posts_done: bool = False
    all_posted_s: float | None = None
    cut_by_deadline: bool = False
    polls: int = 0
    other_load_cores: float | None = None


def _pause(latency: float) -> float:
    return min(POLL_MAX_S, max(POLL_MIN_S, POLL_FACTOR * latency))


async def list_ids(conn: Connection, prefix: str, status: str | None = None) -> list[str]:
    """Ids of the servers whose name starts with ``prefix`` (every page)."""
    query = f"name={quote('^' + prefix)}&limit={PAGE}"
    if status:
        query += f"&status={status}"
    ids: list[str] = []
    marker = ""
    while True:
        resp = await expect(conn, Call("GET", f"/servers?{query}{marker}"), 200)
        body = resp.json()
        assert isinstance(body, dict)
        page = [s["id"] for s in body["servers"]]
        ids += page
        if len(page) < PAGE:
            return ids
        marker = f"&marker={page[-1]}"


def _boot_body(spec: BootSpec, name: str) -> dict[str, Any]:
    return {
        "server": {
            "name": name,
            "imageRef": spec.image,
            "flavorRef": spec.flavor,
            "networks": "none",
        }
    }


async def _poster(
    run: BootRun, conn: Connection, spec: BootSpec, names: Any, stop_at: float
) -> None:
    for name in names:
        if time.perf_counter() > stop_at:
            run.cut_by_deadline = True
            return
        t0 = time.perf_counter()
        resp = await conn.request(Call("POST", "/servers", _boot_body(spec, name)))
        if resp.status != 202:
            run.post_errors += 1
            run.first_error = run.first_error or f"POST {resp.status} {resp.body[:200]!r}"
            continue
        run.post_latencies.append(time.perf_counter() - t0)
        body = resp.json()
        assert isinstance(body, dict)
        run.posted.append(body["server"]["id"])


async def _poller(
    run: BootRun, cloud: Cloud, conn: Connection, prefix: str, start: float, stop_at: float
) -> None:
    pids = cloud.server_pids()
    while not (run.posts_done and len(run.active_at) + len(run.errored) >= len(run.posted)):
        if time.perf_counter() > stop_at:
            run.cut_by_deadline = True
            return
        t0 = time.perf_counter()
        active = await list_ids(conn, prefix, "ACTIVE")
        now = time.perf_counter()
        for uuid in active:
            run.active_at.setdefault(uuid, now - start)
        run.polls += 1
        if run.polls % 5 == 0 or run.posts_done:
            run.errored.update(await list_ids(conn, prefix, "ERROR"))
        cpu = procstats.sample(pids).cpu_s
        run.snapshots.append(Snapshot(now - start, len(run.active_at), cpu))
        await asyncio.sleep(_pause(now - t0))


async def boot_phase(
    cloud: Cloud, spec: BootSpec, n: int, clients: int, prefix: str, deadline_s: float
) -> BootRun:
    """POST ``n`` servers from ``clients`` concurrent clients; wait until all are ACTIVE."""
    run = BootRun()
    posters = conns(cloud, clients, spec.version)
    (poll_conn,) = conns(cloud, 1, spec.version)
    names = iter(f"{prefix}{i:04d}" for i in range(n))
    cpu0 = procstats.sample(cloud.server_pids()).cpu_s
    start = time.perf_counter()
    stop_at = start + deadline_s
    run.snapshots.append(Snapshot(0.0, 0, cpu0))

    async def post_all() -> None:
        await asyncio.gather(*(_poster(run, c, spec, names, stop_at) for c in posters))
        run.posts_done = True
        run.all_posted_s = time.perf_counter() - start

    busy0, client0 = procstats.machine_busy_s(), time.process_time()
    await asyncio.gather(post_all(), _poller(run, cloud, poll_conn, prefix, start, stop_at))
    wall = max(time.perf_counter() - start, 1e-9)
    busy = procstats.machine_busy_s() - busy0 - (time.process_time() - client0)
    other = busy - (run.snapshots[-1].cpu_s - cpu0)
    run.other_load_cores = round(max(0.0, other) / wall, 2)
    for c in [*posters, poll_conn]:
        c.close()
    return run


def _segment(a: Snapshot, b: Snapshot) -> dict[str, float]:
    boots = max(1, b.active - a.active)
    return {
        "boots": b.active - a.active,
        "wall_ms_per_boot": round((b.t - a.t) * 1000 / boots, 2),
        "stack_cpu_ms_per_boot": round((b.cpu_s - a.cpu_s) * 1000 / boots, 2),
    }


def _first_at(snaps: list[Snapshot], count: int) -> Snapshot:
    return next((s for s in snaps if s.active >= count), snaps[-1])


def summarize_boot(run: BootRun, n: int, window: int = 50) -> dict[str, Any]:
    """Wall time to the last ACTIVE, POST latencies, per-boot cost of the first/last window."""
    times = sorted(run.active_at.values())
    snaps = run.snapshots
    out: dict[str, Any] = {
        "requested": n,
        "posted": len(run.posted),
        "active": len(times),
        "errored": len(run.errored),
        "post_errors": run.post_errors,
        "cut_by_deadline": run.cut_by_deadline,
        "polls": run.polls,
        "other_load_cores": run.other_load_cores,
        "all_active_s": round(times[-1], 3) if times else None,
        "all_posted_s": None if run.all_posted_s is None else round(run.all_posted_s, 3),
        "post_p50_ms": _pct(run.post_latencies, 50),
        "post_max_ms": _pct(run.post_latencies, 100),
        "stack_cpu_s": round(snaps[-1].cpu_s - snaps[0].cpu_s, 2),
    }
    if times:
        out["stack_cpu_ms_per_boot"] = round(out["stack_cpu_s"] * 1000 / len(times), 2)
    if run.first_error:
        out["first_error"] = run.first_error
    if len(times) >= 2 * window:
        first = _first_at(snaps, window)
        last_from = _first_at(snaps, len(times) - window)
        out[f"first_{window}"] = _segment(snaps[0], first)
        out[f"last_{window}"] = _segment(last_from, snaps[-1])
        out[f"post_p50_ms_first_{window}"] = _pct(run.post_latencies[:window], 50)
        out[f"post_p50_ms_last_{window}"] = _pct(run.post_latencies[-window:], 50)
    return out


def _pct(values: list[float], pct: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, round(pct / 100 * len(ordered) + 0.5) - 1))
    return round(ordered[rank] * 1000, 2)


async def get_latency(
    cloud: Cloud, paths: list[str], version: str, total: int, deadline_s: float, warmup: int
) -> dict[str, Any]:
    """Sequential GETs cycling over ``paths``: p50/p99, plus stack CPU per request."""

    def call(i: int) -> Call:
        return Call("GET", paths[i % len(paths)])

    seq = conns(cloud, 1, version)
    await run_bounded(seq, call, warmup, 60.0)
    pids = cloud.server_pids()
    cpu0 = procstats.sample(pids).cpu_s
    result = await run_bounded(seq, call, total, deadline_s)
    cpu = procstats.sample(pids).cpu_s - cpu0
    last: Response = await seq[0].request(call(0))
    seq[0].close()
    out: dict[str, Any] = dict(result.summary())
    out["stack_cpu_ms_per_req"] = round(cpu * 1000 / max(1, result.count), 2)
    body = last.json()
    if isinstance(body, dict) and "servers" in body:
        out["servers_listed"] = len(body["servers"])
    if result.errors:
        out["first_error"] = result.first_error
    return out


async def delete_phase(
    cloud: Cloud, ids: list[str], version: str, clients: int, prefix: str, deadline_s: float
) -> dict[str, Any]:
    """DELETE every server from ``clients`` clients; time until none is listed, then check
    (untimed) that every id answers 404."""
    start = time.perf_counter()
    cpu0 = procstats.sample(cloud.server_pids()).cpu_s
    result = await run_bounded(
        conns(cloud, clients, version),
        lambda i: Call("DELETE", f"/servers/{ids[i]}"),
        len(ids),
        deadline_s,
        ok=lambda r: r.status in (204, 404),
    )
    (poll,) = conns(cloud, 1, version)
    left = await list_ids(poll, prefix)
    while left and time.perf_counter() - start < deadline_s:
        t0 = time.perf_counter()
        left = await list_ids(poll, prefix)
        await asyncio.sleep(_pause(time.perf_counter() - t0) if left else 0)
    gone = time.perf_counter() - start
    cpu = procstats.sample(cloud.server_pids()).cpu_s - cpu0
    not_404 = 0
    for uuid in ids:
        if (await poll.request(Call("GET", f"/servers/{uuid}"))).status != 404:
            not_404 += 1
    poll.close()
    out: dict[str, Any] = {
        "servers": len(ids),
        "all_delete_returned_s": round(result.wall, 3),
        "delete_p50_ms": round(result.percentile(50), 2),
        "all_gone_s": round(gone, 3),
        "still_listed": len(left),
        "not_404_after": not_404,
        "stack_cpu_ms_per_delete": round(cpu * 1000 / max(1, len(ids)), 2),
    }
    if result.errors:
        out["first_error"] = result.first_error
    return out
