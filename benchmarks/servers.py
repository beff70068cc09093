"""Servers benchmark: boot / show / list / delete on OpenKeel vs real Nova 34.0.0, same run.

Run it through benchmarks/run-servers.sh (which starts OpenKeel and reuses or starts Nova), or
directly against two running clouds:

    python -m benchmarks.servers --openkeel-url http://127.0.0.1:PORT/v2.1 --openkeel-pid PID

Phases (Nova then OpenKeel back to back where both run): 50 servers booted by 10 clients until
ACTIVE; GET /servers/{id} and GET /servers/detail with them present; delete until gone; then on
OpenKeel 500 boots (per-boot cost of the first vs the last 50), 500 more to reach 1,000,
GET /servers/detail and /servers/{id} with 1,000 present, delete all. Nova's 500-boot time is
estimated from its 50-boot rate unless --nova-big-deadline is given. RSS of OpenKeel's one
process vs Nova's service process groups. Prints the table and writes the JSON.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
from pathlib import Path
from typing import Any

from benchmarks import procstats, server_report
from benchmarks.foundation import context
from benchmarks.loadgen import Call
from benchmarks.server_workload import (
    BootSpec,
    boot_phase,
    delete_phase,
    get_latency,
    list_ids,
    summarize_boot,
)
from benchmarks.workload import Cloud, conns, expect, run

HERE = Path(__file__).resolve().parent
FLAVOR = {"name": "sbench.tiny", "id": "sbench-flavor", "ram": 64, "vcpus": 1, "disk": 1}
PREFIX = "sbench-"
CORE = ("nova-api", "nova-conductor", "nova-scheduler", "nova-compute")


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--nova-url", default=os.environ.get("REAL_NOVA_URL", "http://127.0.0.1:18774/v2.1")
    )
    p.add_argument("--nova-base", default=os.environ.get("REAL_NOVA_BASE", "/tmp/real-nova"))
    p.add_argument("--nova-image", default=os.environ.get("REAL_NOVA_IMAGE_ID"))
    p.add_argument("--openkeel-url", required=True)
    p.add_argument("--openkeel-pid", type=int, required=True, help="pid (= pgid) of the all-in-one")
    p.add_argument("--openkeel-image", default=None, help="default: the first image listed")
    p.add_argument("--version", default="2.95", help="microversion for every call (>= 2.37)")
    p.add_argument("--clients", type=int, default=10)
    p.add_argument("--small", type=int, default=50)
    p.add_argument("--big", type=int, default=500)
    p.add_argument("--list-total", type=int, default=1000)
    p.add_argument("--nova-big-deadline", type=float, default=0.0, help="0: estimate instead")
    p.add_argument("--deadline", type=float, default=600.0, help="per boot/delete phase, s")
    p.add_argument("--quick", action="store_true", help="10 / 50 / 100 servers, smoke run")
    p.add_argument("--out", default=None, help="JSON path (default results/servers-DATE.json)")
    args = p.parse_args()
    if args.quick:
        args.small, args.big, args.list_total = 10, 50, 100
    return args


def nova_groups(base: str) -> dict[str, int]:
    """Service name -> process group id, from the pid files setup.sh writes."""
    run_dir = Path(base) / "run"
    return {
        f.stem: int(f.read_text().strip())
        for f in sorted(run_dir.glob("*.pid"))
        if f.stem != "epmd"
    }


def pids_of(groups: dict[str, int], names: tuple[str, ...]) -> tuple[int, ...]:
    return tuple(p for n in names if n in groups for p in procstats.group_pids(groups[n]))


def infra_pids() -> tuple[int, ...]:
    """MariaDB and RabbitMQ, which Nova needs and OpenKeel's all-in-one does not."""
    found = (procstats.pid_of_comm(c) for c in ("mariadbd", "mysqld", "beam.smp"))
    return tuple(p for p in found if p)


def make_clouds(args: argparse.Namespace) -> tuple[Cloud, Cloud]:
    """Nova's "stack" (CPU accounting) is every service group of setup.sh plus MariaDB and
    RabbitMQ: the work OpenKeel's one process does with SQLite and its in-process bus."""
    groups = nova_groups(args.nova_base)
    infra = infra_pids()
    nova = Cloud(
        "nova",
        args.nova_url.rstrip("/"),
        server_pids=lambda: pids_of(groups, tuple(groups)) + infra,
    )
    nova.info["groups"] = groups
    pgid = args.openkeel_pid
    openkeel = Cloud(
        "openkeel",
        args.openkeel_url.rstrip("/"),
        server_pids=lambda: procstats.group_pids(pgid) or (pgid,),
    )
    return nova, openkeel


async def prepare(cloud: Cloud, version: str, image: str | None) -> BootSpec:
    """Untimed: the benchmark flavor, an image, and no servers left from earlier runs."""
    (conn,) = conns(cloud, 1, version)
    resp = await conn.request(Call("GET", f"/flavors/{FLAVOR['id']}"))
    if resp.status == 404:
        await expect(conn, Call("POST", "/flavors", {"flavor": FLAVOR}), 200)
    if not image:
        (old,) = conns(cloud, 1, "2.1")  # the image proxy API is gone at >= 2.36
        body = (await expect(old, Call("GET", "/images"), 200)).json()
        old.close()
        assert isinstance(body, dict) and body["images"], f"{cloud.name}: no image"
        image = str(body["images"][0]["id"])
    left = await list_ids(conn, PREFIX)
    conn.close()
    if left:
        print(f"  {cloud.name}: deleting {len(left)} servers left by an earlier run", flush=True)
        await delete_phase(cloud, left, version, 10, PREFIX, 600.0)
    return BootSpec(image=image, flavor=str(FLAVOR["id"]), version=version)


def rss(cloud: Cloud) -> dict[str, Any]:
    """RSS (MiB) of the cloud's processes; for Nova per service group and summed."""
    if cloud.name == "openkeel":
        s = procstats.sample(cloud.server_pids())
        return {"procs": len(s.pids), "total_mib": s.rss_total_mib}
    groups: dict[str, int] = cloud.info["groups"]  # type: ignore[assignment]
    per = {n: procstats.sample(procstats.group_pids(g)) for n, g in groups.items()}
    out: dict[str, Any] = {n: s.rss_total_mib for n, s in per.items()}
    out["core_procs"] = sum(len(per[n].pids) for n in CORE if n in per)
    out["core_mib"] = round(sum(per[n].rss_total_mib for n in CORE if n in per), 1)
    out["all_mib"] = round(sum(s.rss_total_mib for s in per.values()), 1)
    out["all_procs"] = sum(len(s.pids) for s in per.values())
    out["mariadb_rabbitmq_mib"] = procstats.sample(infra_pids()).rss_total_mib
    return out


async def small_round(
    clouds: tuple[Cloud, ...], specs: dict[str, BootSpec], args: argparse.Namespace
) -> dict[str, Any]:
    """N=small on both: boot, show, detail, RSS, delete."""
    out: dict[str, Any] = {}
    n, tag = args.small, f"{PREFIX}s{os.getpid()}-"
    ids: dict[str, list[str]] = {}
    for c in clouds:
        print(f"  {c.name:8} boot {n} servers, {args.clients} clients", flush=True)
        booted = await boot_phase(c, specs[c.name], n, args.clients, tag, args.deadline)
        out.setdefault("boot", {})[c.name] = summarize_boot(booted, n)
        ids[c.name] = booted.posted
    for c in clouds:
        print(f"  {c.name:8} GET /servers/{{id}} and /servers/detail, {n} present", flush=True)
        paths = [f"/servers/{i}" for i in ids[c.name]]
        out.setdefault("show", {})[c.name] = await get_latency(
            c, paths, args.version, 300, 20.0, 10
        )
        detail = ["/servers/detail"]
        out.setdefault("detail", {})[c.name] = await get_latency(
            c, detail, args.version, 50, 20.0, 3
        )
        out.setdefault("rss", {})[c.name] = rss(c)
    for c in clouds:
        print(f"  {c.name:8} delete {n}", flush=True)
        out.setdefault("delete", {})[c.name] = await delete_phase(
            c, ids[c.name], args.version, args.clients, tag, args.deadline
        )
    return out


async def big_round(cloud: Cloud, spec: BootSpec, args: argparse.Namespace) -> dict[str, Any]:
    """OpenKeel: boot ``big``, top up to ``list_total``, list/show with them, delete all."""
    out: dict[str, Any] = {}
    tag = f"{PREFIX}b{os.getpid()}-"
    print(f"  {cloud.name:8} boot {args.big} servers", flush=True)
    first = await boot_phase(cloud, spec, args.big, args.clients, tag + "a", args.deadline)
    out["boot_big"] = summarize_boot(first, args.big)
    more = args.list_total - args.big
    print(f"  {cloud.name:8} boot {more} more ({args.big} present)", flush=True)
    second = await boot_phase(cloud, spec, more, args.clients, tag + "b", args.deadline)
    out["boot_more"] = summarize_boot(second, more)
    ids = first.posted + second.posted
    print(
        f"  {cloud.name:8} GET /servers/detail and /servers/{{id}}, {len(ids)} present", flush=True
    )
    detail = ["/servers/detail"]
    out["detail"] = await get_latency(cloud, detail, args.version, 50, 30.0, 3)
    paths = [f"/servers/{i}" for i in ids]
    out["show"] = await get_latency(cloud, paths, args.version, 300, 20.0, 10)
    out["rss"] = rss(cloud)
    print(f"  {cloud.name:8} delete {len(ids)}", flush=True)
    out["delete"] = await delete_phase(cloud, ids, args.version, args.clients, tag, args.deadline)
    out["rss_after_delete"] = rss(cloud)
    return out


async def bench(clouds: tuple[Cloud, Cloud], args: argparse.Namespace) -> dict[str, Any]:
    nova, openkeel = clouds
    specs = {
        nova.name: await prepare(nova, args.version, args.nova_image),
        openkeel.name: await prepare(openkeel, args.version, args.openkeel_image),
    }
    results: dict[str, Any] = {"specs": {k: v.__dict__ for k, v in specs.items()}}
    results["rss_idle"] = {c.name: rss(c) for c in clouds}
    results["small"] = await small_round(clouds, specs, args)
    results["big"] = {"openkeel": await big_round(openkeel, specs["openkeel"], args)}
    if args.nova_big_deadline > 0:
        print(
            f"  nova     boot {args.big} servers (deadline {args.nova_big_deadline} s)", flush=True
        )
        tag = f"{PREFIX}n{os.getpid()}-"
        booted = await boot_phase(
            nova, specs["nova"], args.big, args.clients, tag, args.nova_big_deadline
        )
        results["big"]["nova"] = {"boot_big": summarize_boot(booted, args.big)}
        results["big"]["nova"]["delete"] = await delete_phase(
            nova, booted.posted, args.version, args.clients, tag, args.deadline
        )
    return results


def main() -> int:
    args = parse_args()
    clouds = make_clouds(args)
    results: dict[str, Any] = {"context": context(), "args": vars(args)}
    busy0 = procstats.machine_busy_s()
    measured = run(bench(clouds, args))
    assert isinstance(measured, dict)
    results.update(measured)
    results["machine_busy_cpu_s"] = round(procstats.machine_busy_s() - busy0, 1)
    results["loadavg_after"] = os.getloadavg()
    results["table"] = server_report.rows(results)
    print(server_report.render(results))
    out = Path(args.out or HERE / "results" / f"servers-{datetime.date.today()}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=1) + "\n")
    print(f"\nwrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
