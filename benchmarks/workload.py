"""The foundation workload against one cloud: setup data and the measured phases.

Used by benchmarks/foundation.py, which runs each phase on real Nova and on OpenKeel back to
back. Setup (100 flavors, 50 imported keypairs) is not timed; every measured phase is bounded
by a request count and a deadline, after a warm-up.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

from benchmarks import procstats
from benchmarks.loadgen import Call, Connection, Response, RunResult, run_bounded

FLAVOR_PREFIX = "fbench-"
LIST_KP_PREFIX = "fbench-kp-"
TP_KP_PREFIX = "fbench-tp-"
ADMIN_TOKEN = "admin:admin"
# keypair create/delete runs as its own user, in batches below the default quota of 100
TP_TOKEN = "fbenchtp:admin"
TP_BATCH = 90


@dataclass
class Cloud:
    """A compute API under test and how to find its server processes."""

    name: str
    url: str
    server_pids: Callable[[], tuple[int, ...]]
    extra_pids: Callable[[], tuple[int, ...]] = lambda: ()
    max_version: str = "2.1"
    info: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class Bounds:
    """Request counts and deadlines for the measured phases."""

    warmup: int = 30
    seq_total: int = 300
    seq_deadline_s: float = 8.0
    conc_clients: int = 4
    conc_total: int = 3000
    conc_deadline_s: float = 10.0
    kp_clients: int = 10
    kp_total: int = 900
    kp_deadline_s: float = 12.0


def conns(cloud: Cloud, n: int, version: str, token: str = ADMIN_TOKEN) -> list[Connection]:
    headers = {"X-Auth-Token": token, "OpenStack-API-Version": f"compute {version}"}
    return [Connection(cloud.url, headers) for _ in range(n)]


async def expect(conn: Connection, call: Call, *statuses: int) -> Response:
    resp = await conn.request(call)
    if resp.status not in statuses:
        raise RuntimeError(f"{call.method} {call.path}: {resp.status} {resp.body[:300]!r}")
    return resp


async def max_version(cloud: Cloud) -> str:
    """The newest microversion the cloud serves (from GET /v2.1/)."""
    (conn,) = conns(cloud, 1, "2.1")
    doc = (await expect(conn, Call("GET", "/"), 200)).json()
    conn.close()
    assert isinstance(doc, dict)
    return str(doc["version"]["version"])


async def flavor_names(cloud: Cloud) -> list[str]:
    (conn,) = conns(cloud, 1, "2.1")
    resp = await expect(conn, Call("GET", "/flavors?is_public=None"), 200)
    conn.close()
    body = resp.json()
    assert isinstance(body, dict)
    return [f["name"] for f in body["flavors"]]


async def ensure_flavors(cloud: Cloud, total: int) -> int:
    """Create ``fbench-NNN`` flavors until the cloud lists ``total``; returns how many exist."""
    names = set(await flavor_names(cloud))
    wanted = [f"{FLAVOR_PREFIX}{i:03d}" for i in range(total * 2)]
    missing = [n for n in wanted if n not in names][: max(0, total - len(names))]

    def create(i: int) -> Call:
        body = {"flavor": {"name": missing[i], "ram": 512, "vcpus": 1, "disk": 10}}
        return Call("POST", "/flavors", body)

    result = await run_bounded(conns(cloud, 4, "2.1"), create, len(missing), 600.0)
    if result.errors:
        raise RuntimeError(f"{cloud.name}: flavor create failed: {result.first_error}")
    return len(await flavor_names(cloud))


async def ensure_keypairs(cloud: Cloud, count: int, public_key: str) -> int:
    """Import ``fbench-kp-NN`` keypairs for the admin user; returns how many the user has."""
    (conn,) = conns(cloud, 1, "2.1")
    body = (await expect(conn, Call("GET", "/os-keypairs"), 200)).json()
    assert isinstance(body, dict)
    have = {k["keypair"]["name"] for k in body["keypairs"]}
    for i in range(count):
        name = f"{LIST_KP_PREFIX}{i:02d}"
        if name not in have:
            call = Call(
                "POST", "/os-keypairs", {"keypair": {"name": name, "public_key": public_key}}
            )
            await expect(conn, call, 200, 201)
    body = (await expect(conn, Call("GET", "/os-keypairs"), 200)).json()
    conn.close()
    assert isinstance(body, dict)
    return len(body["keypairs"])


async def measure(
    cloud: Cloud,
    clients: list[Connection],
    calls: Callable[[int], Call],
    total: int,
    deadline_s: float,
) -> dict[str, object]:
    """A bounded run plus the CPU its server processes (and Nova's DB) spent on it, and the
    load of everything else on the machine meanwhile (in cores) to spot contended runs."""
    pids, extra = cloud.server_pids(), cloud.extra_pids()
    before, before_x = procstats.sample(pids), procstats.sample(extra)
    busy, client = procstats.machine_busy_s(), time.process_time()
    result = await run_bounded(clients, calls, total, deadline_s)
    server = procstats.sample(pids).cpu_s - before.cpu_s
    db = procstats.sample(extra).cpu_s - before_x.cpu_s
    client = time.process_time() - client
    other = procstats.machine_busy_s() - busy - server - db - client
    out: dict[str, object] = dict(result.summary())
    n, wall = max(1, result.count), max(result.wall, 1e-9)
    out["server_cpu_ms_per_req"] = round(server * 1000 / n, 3)
    if extra:
        out["db_cpu_ms_per_req"] = round(db * 1000 / n, 3)
    out["client_cpu_ms_per_req"] = round(client * 1000 / n, 3)
    out["other_load_cores"] = round(max(0.0, other) / wall, 2)
    if result.errors:
        out["first_error"] = result.first_error
    return out


async def get_phase(cloud: Cloud, path: str, version: str, bounds: Bounds) -> dict[str, object]:
    """Sequential latency (1 client) and concurrent throughput of one GET."""

    def call(_: int) -> Call:
        return Call("GET", path)

    seq = conns(cloud, 1, version)
    warm = await run_bounded(seq, call, bounds.warmup, 30.0)
    if warm.errors:
        raise RuntimeError(f"{cloud.name} GET {path}: {warm.first_error}")
    sequential = await measure(cloud, seq, call, bounds.seq_total, bounds.seq_deadline_s)
    many = conns(cloud, bounds.conc_clients, version)
    await run_bounded(many, call, bounds.warmup, 30.0)
    concurrent = await measure(cloud, many, call, bounds.conc_total, bounds.conc_deadline_s)
    for c in seq + many:
        c.close()
    return {"sequential": sequential, "concurrent": concurrent}


def _kp_create(names: list[str], public_key: str, i: int) -> Call:
    return Call("POST", "/os-keypairs", {"keypair": {"name": names[i], "public_key": public_key}})


def _kp_delete(names: list[str], i: int) -> Call:
    return Call("DELETE", f"/os-keypairs/{names[i]}")


async def keypair_phase(
    cloud: Cloud, version: str, public_key: str, bounds: Bounds, tag: str
) -> dict[str, object]:
    """Import + delete throughput at ``kp_clients`` concurrency, in batches under quota."""
    clients = conns(cloud, bounds.kp_clients, version, TP_TOKEN)
    pids = cloud.server_pids()
    cpu0 = procstats.sample(pids).cpu_s
    creates: list[RunResult] = []
    deletes: list[RunResult] = []
    done, spent = 0, 0.0
    while done < bounds.kp_total and spent < bounds.kp_deadline_s:
        names = [f"{TP_KP_PREFIX}{tag}-{done + i}" for i in range(TP_BATCH)]
        creates.append(
            await run_bounded(clients, partial(_kp_create, names, public_key), TP_BATCH, 60.0)
        )
        deletes.append(await run_bounded(clients, partial(_kp_delete, names), TP_BATCH, 60.0))
        spent += creates[-1].wall + deletes[-1].wall
        done += TP_BATCH
    for c in clients:
        c.close()
    ops = max(1, sum(r.count for r in creates + deletes))
    cpu_ms = round((procstats.sample(pids).cpu_s - cpu0) * 1000 / ops, 3)
    return {"create": _merge(creates), "delete": _merge(deletes), "server_cpu_ms_per_op": cpu_ms}


def _merge(runs: list[RunResult]) -> dict[str, object]:
    merged = RunResult()
    for r in runs:
        merged.latencies += r.latencies
        merged.wall += r.wall
        merged.errors += r.errors
        merged.first_error = merged.first_error or r.first_error
    out: dict[str, object] = dict(merged.summary())
    if merged.errors:
        out["first_error"] = merged.first_error
    return out


async def keypair_warmup(cloud: Cloud, version: str, public_key: str) -> None:
    bounds = Bounds(kp_total=1, kp_deadline_s=60.0)
    await keypair_phase(cloud, version, public_key, bounds, "warm")


def run(coro: object) -> object:
    """asyncio.run with uvloop when it is installed."""
    try:
        import uvloop

        return uvloop.run(coro)  # type: ignore[arg-type]
    except ImportError:
        return asyncio.run(coro)  # type: ignore[arg-type]
