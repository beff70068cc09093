"""Scale-out benchmark: the same servers workload on the all-in-one and on the roles as separate
processes (PostgreSQL, RabbitMQ, Placement over HTTP in its own process), same run.

    python -m benchmarks.scale_out [--servers 60] [--clients 10] [--computes 2] [--apis 1]

What it starts (all stopped again at the end):
- **all-in-one**: ``openkeel all-in-one`` in a temporary data dir (SQLite, in-process messaging,
  embedded Placement), noauth2, unlimited quota;
- **scale-out**: databases ``okbench_<pid>_{api,cell0,cell1}`` on the machine's PostgreSQL
  (dropped at the end), cell1 mapped as ``openkeel manage`` would, Placement (the
  openstack-placement package behind ``EmbeddedPlacement``) serving HTTP from a process of its
  own, then ``openkeel scheduler``, ``conductor``, ``--computes`` x ``compute`` (one simulated
  host each) and ``--apis`` x ``api`` as separate processes on RabbitMQ (own exchange).

Phases on each, back to back: ``--servers`` boots from ``--clients`` clients until ACTIVE
(boots/s, POST p50), ``GET /servers/{id}`` and ``GET /servers/detail`` with them present
(p50/p99, sequential), delete until gone (deletes/s). Stack CPU counts every process of the
deployment; for the scale-out one that includes PostgreSQL and RabbitMQ (the work the
all-in-one does with SQLite and its in-process bus). Ratio = scale-out / all-in-one for rates,
all-in-one / scale-out for latencies and CPU, so > 1 means the scale-out shape is better.
Prints the table and writes ``benchmarks/results/scale-out-DATE.json``. Never asserts timings.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from benchmarks import procstats
from benchmarks.foundation import context
from benchmarks.server_workload import (
    BootSpec,
    boot_phase,
    delete_phase,
    get_latency,
    summarize_boot,
)
from benchmarks.servers import prepare
from benchmarks.workload import Cloud, run

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"
TRANSPORT = "rabbit://guest:guest@127.0.0.1:5672/"
QUOTA = {"instances": "-1", "cores": "-1", "ram": "-1", "key_pairs": "-1"}
PREFIX = "sobench-"


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--servers", type=int, default=60)
    p.add_argument("--clients", type=int, default=10)
    p.add_argument("--computes", type=int, default=2)
    p.add_argument("--apis", type=int, default=1, help="API processes (the load goes to the first)")
    p.add_argument("--version", default="2.95")
    p.add_argument("--deadline", type=float, default=600.0, help="per boot/delete phase, s")
    p.add_argument("--out", default=None, help="JSON path (default results/scale-out-DATE.json)")
    return p.parse_args()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def conf_file(path: Path, sections: dict[str, dict[str, str]]) -> Path:
    lines = []
    for section, values in sections.items():
        lines.append(f"[{section}]")
        lines += [f"{key} = {value}" for key, value in values.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


class Processes:
    """Child processes, each in its own process group, stopped (SIGTERM, then SIGKILL)."""

    def __init__(self, work: Path) -> None:
        self.work = work
        self.started: dict[str, subprocess.Popen[bytes]] = {}

    def start(self, name: str, argv: list[str]) -> subprocess.Popen[bytes]:
        log = (self.work / f"{name}.log").open("wb")
        env = {**os.environ, "PYTHONWARNINGS": "ignore", "PYTHONPATH": str(REPO)}
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env,
                                start_new_session=True)  # fmt: skip
        log.close()
        self.started[name] = proc
        return proc

    def pids(self) -> tuple[int, ...]:
        return tuple(p for proc in self.started.values() for p in procstats.group_pids(proc.pid))

    def check(self) -> None:
        for name, proc in self.started.items():
            if proc.poll() is not None:
                tail = (self.work / f"{name}.log").read_text()[-3000:]
                raise SystemExit(f"{name} exited ({proc.returncode}):\n{tail}")

    def stop(self) -> None:
        for proc in self.started.values():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.started.values():
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def wait_url(url: str, procs: Processes, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            urllib.request.urlopen(url, timeout=2).close()
            return
        except OSError:
            procs.check()
            if time.monotonic() > deadline:
                raise SystemExit(f"{url} did not answer within {timeout:.0f} s") from None
            time.sleep(0.25)  # polling processes this benchmark started, bounded


def openkeel(*args: str) -> list[str]:
    return [sys.executable, "-m", "openkeel.cmd.main", *args]


@contextlib.contextmanager
def all_in_one(work: Path) -> Iterator[Cloud]:
    procs = Processes(work)
    port = free_port()
    conf = conf_file(work / "aio.conf", {"api": {"auth_strategy": "noauth2"}, "quota": QUOTA})
    procs.start("all-in-one", openkeel("all-in-one", "--data-dir", str(work / "aio-data"),
                                       "--port", str(port), "--config-file", str(conf)))  # fmt: skip
    try:
        url = f"http://127.0.0.1:{port}/v2.1"
        wait_url(url + "/", procs)
        yield Cloud("all-in-one", url, server_pids=procs.pids)
    finally:
        procs.stop()


@contextlib.contextmanager
def databases(tag: str) -> Iterator[dict[str, str]]:
    admin = sa.create_engine(PG_ADMIN, isolation_level="AUTOCOMMIT")
    names = {n: f"okbench_{tag}_{n}" for n in ("api", "cell0", "cell1")}
    with admin.connect() as conn:
        for db in names.values():
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{db}"'))
            conn.execute(sa.text(f'CREATE DATABASE "{db}"'))
    try:
        yield {n: f"postgresql://postgres@127.0.0.1:5432/{db}" for n, db in names.items()}
    finally:
        with admin.connect() as conn:
            for db in names.values():
                conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)'))
        admin.dispose()


def map_cells(work: Path, urls: dict[str, str]) -> None:
    """Schemas and cell mappings with ``openkeel manage``, as an operator does it."""
    conf = conf_file(work / "manage.conf", {
        "DEFAULT": {"transport_url": TRANSPORT},
        "api_database": {"connection": urls["api"]},
        "database": {"connection": urls["cell1"]},
    })  # fmt: skip
    steps = (
        ("api_db", "sync"),
        ("cell_v2", "map_cell0", "--database_connection", urls["cell0"]),
        ("db", "sync"),
        ("cell_v2", "create_cell", "--name", "cell1"),
    )
    env = {**os.environ, "PYTHONWARNINGS": "ignore", "PYTHONPATH": str(REPO)}
    for step in steps:
        done = subprocess.run(openkeel("manage", "--config-file", str(conf), *step),
                              capture_output=True, text=True, env=env, timeout=300)  # fmt: skip
        if done.returncode != 0:
            raise SystemExit(f"openkeel manage {' '.join(step)}: {done.stdout}{done.stderr}")


PLACEMENT_SERVER = """
import sys, threading
from pathlib import Path
from openkeel.clients.placement_embedded import EmbeddedPlacement
placement = EmbeddedPlacement(Path(sys.argv[1])).start()
print(placement.serve_http(), flush=True)
threading.Event().wait()
"""


def start_placement(procs: Processes, work: Path) -> str:
    proc = procs.start(
        "placement", [sys.executable, "-c", PLACEMENT_SERVER, str(work / "placement")]
    )
    log = work / "placement.log"
    deadline = time.monotonic() + 60
    while True:
        for line in log.read_text().splitlines():
            if line.startswith("http"):
                return line.strip()
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"Placement did not start:\n{log.read_text()[-2000:]}")
        time.sleep(0.1)  # polling a process this benchmark started, bounded


@contextlib.contextmanager
def scaled_out(work: Path, computes: int, apis: int) -> Iterator[Cloud]:
    tag = f"{os.getpid()}"
    with databases(tag) as urls:
        map_cells(work, urls)
        procs = Processes(work)
        try:
            placement = start_placement(procs, work)
            ports = [free_port() for _ in range(apis)]
            common: dict[str, dict[str, str]] = {
                "api": {"auth_strategy": "noauth2"},
                "api_database": {"connection": urls["api"]},
                "database": {"connection": urls["cell1"]},
                "placement": {"endpoint_override": placement, "auth_type": "admin_token",
                              "token": "admin"},
                "quota": QUOTA,
            }  # fmt: skip
            default = {"transport_url": TRANSPORT, "control_exchange": f"okbench_{tag}"}

            def conf(name: str, **extra: str) -> str:
                sections = {"DEFAULT": {**default, **extra}, **common}
                return str(conf_file(work / f"{name}.conf", sections))

            procs.start(
                "scheduler",
                openkeel("scheduler", "--config-file", conf("scheduler", host="so-sched")),
            )
            procs.start(
                "conductor",
                openkeel("conductor", "--config-file", conf("conductor", host="so-cond")),
            )
            for i in range(computes):
                name = f"compute-{i}"
                procs.start(
                    name, openkeel("compute", "--config-file", conf(name, host=f"so-{tag}-c{i}"))
                )
            for i, port in enumerate(ports):
                name = f"api-{i}"
                path = conf(name, host="so-api", osapi_compute_listen_port=str(port))
                procs.start(name, openkeel("api", "--config-file", path))
            url = f"http://127.0.0.1:{ports[0]}/v2.1"
            for port in ports:
                wait_url(f"http://127.0.0.1:{port}/v2.1/", procs)
            cloud = Cloud("scale-out", url, server_pids=lambda: procs.pids() + infra_pids())
            wait_hypervisors(url, computes, procs)
            yield cloud
        finally:
            procs.stop()


def infra_pids() -> tuple[int, ...]:
    """PostgreSQL (every backend) and RabbitMQ: the work the all-in-one does in process."""
    return procstats.pids_of_comm("postgres") + procstats.pids_of_comm("beam.smp")


def wait_hypervisors(url: str, count: int, procs: Processes, timeout: float = 120) -> None:
    request = urllib.request.Request(
        f"{url}/os-hypervisors", headers={"X-Auth-Token": "admin:admin"}
    )
    deadline = time.monotonic() + timeout
    while True:
        with urllib.request.urlopen(request, timeout=10) as resp:
            if len(json.load(resp)["hypervisors"]) >= count:
                return
        procs.check()
        if time.monotonic() > deadline:
            raise SystemExit(f"fewer than {count} compute hosts registered in {timeout:.0f} s")
        time.sleep(0.25)  # polling processes this benchmark started, bounded


async def phases(cloud: Cloud, args: argparse.Namespace) -> dict[str, Any]:
    spec: BootSpec = await prepare(cloud, args.version, None)
    n, tag = args.servers, f"{PREFIX}{os.getpid()}-"
    print(f"  {cloud.name:10} boot {n} servers, {args.clients} clients", flush=True)
    booted = await boot_phase(cloud, spec, n, args.clients, tag, args.deadline)
    out: dict[str, Any] = {"boot": summarize_boot(booted, n)}
    print(f"  {cloud.name:10} GET /servers/{{id}} and /servers/detail, {n} present", flush=True)
    paths = [f"/servers/{i}" for i in booted.posted]
    out["show"] = await get_latency(cloud, paths, args.version, 300, 20.0, 10)
    out["detail"] = await get_latency(cloud, ["/servers/detail"], args.version, 50, 20.0, 3)
    out["rss_mib"] = procstats.sample(cloud.server_pids()).rss_total_mib
    print(f"  {cloud.name:10} delete {n}", flush=True)
    out["delete"] = await delete_phase(cloud, booted.posted, args.version, args.clients, tag,
                                       args.deadline)  # fmt: skip
    return out


def _rate(count: int | None, seconds: float | None) -> float | None:
    return round(count / seconds, 2) if seconds and count else None


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def table(results: dict[str, dict[str, Any]]) -> str:
    aio, so = results["all-in-one"], results["scale-out"]
    rows: list[tuple[str, Any, Any, bool]] = [
        ("boots/s (until ACTIVE)", _rate(aio["boot"]["active"], aio["boot"]["all_active_s"]),
         _rate(so["boot"]["active"], so["boot"]["all_active_s"]), True),
        ("boot POST p50 ms", aio["boot"]["post_p50_ms"], so["boot"]["post_p50_ms"], False),
        ("stack CPU ms per boot", aio["boot"].get("stack_cpu_ms_per_boot"),
         so["boot"].get("stack_cpu_ms_per_boot"), False),
        ("GET /servers/{id} p50 ms", aio["show"].get("p50_ms"), so["show"].get("p50_ms"), False),
        ("GET /servers/{id} p99 ms", aio["show"].get("p99_ms"), so["show"].get("p99_ms"), False),
        ("GET /servers/detail p50 ms", aio["detail"].get("p50_ms"), so["detail"].get("p50_ms"), False),
        ("deletes/s (until gone)", _rate(aio["delete"]["servers"], aio["delete"]["all_gone_s"]),
         _rate(so["delete"]["servers"], so["delete"]["all_gone_s"]), True),
        ("stack CPU ms per delete", aio["delete"]["stack_cpu_ms_per_delete"],
         so["delete"]["stack_cpu_ms_per_delete"], False),
        ("RSS MiB (all processes)", aio["rss_mib"], so["rss_mib"], False),
    ]  # fmt: skip
    lines = [f"{'':30} {'all-in-one':>12} {'scale-out':>12} {'ratio':>7}"]
    for label, a, s, higher_better in rows:
        ratio = None
        if a and s:
            ratio = (s / a) if higher_better else (a / s)
        lines.append(f"{label:30} {_fmt(a):>12} {_fmt(s):>12} {_fmt(ratio):>7}")
    lines.append("ratio > 1: the scale-out deployment is better on that line")
    return "\n".join(lines)


def main() -> int:
    args = parse_args()
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="openkeel-scale-out-") as tmp:
        work = Path(tmp)
        print("all-in-one: starting", flush=True)
        with all_in_one(work) as cloud:
            results["all-in-one"] = run(phases(cloud, args))  # type: ignore[assignment]
        print(
            f"scale-out: starting ({args.computes} computes, {args.apis} API processes)", flush=True
        )
        with scaled_out(work, args.computes, args.apis) as cloud:
            results["scale-out"] = run(phases(cloud, args))  # type: ignore[assignment]
    report = table(results)
    print(report)
    stamp = datetime.date.today().isoformat()
    out = Path(args.out) if args.out else HERE / "results" / f"scale-out-{stamp}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    payload = {"args": vars(args), "context": context(), "results": results, "table": report}
    out.write_text(json.dumps(payload, indent=2, default=str) + "\n")
    print(f"written {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
