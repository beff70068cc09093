"""Foundation benchmark: OpenKeel vs real Nova 34.0.0 on flavors and keypairs, same run.

Run it through benchmarks/run-foundation.sh (which starts both clouds), or directly against
two running clouds:

    python -m benchmarks.foundation --openkeel-url http://127.0.0.1:PORT/v2.1 --openkeel-pid PID

For each microversion (2.1 and the newest both serve): GET /flavors/detail with 100 flavors,
GET /os-keypairs with 50 keypairs (p50/p99 with one client, requests/s with a few), and
keypair import + delete throughput with 10 clients. Prints metric / Nova / OpenKeel / ratio
(ratio = OpenKeel speed / Nova speed) and the API processes' RSS, and writes the JSON.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
from pathlib import Path
from typing import Any

from benchmarks import procstats, report
from benchmarks.workload import (
    Bounds,
    Cloud,
    ensure_flavors,
    ensure_keypairs,
    get_phase,
    keypair_phase,
    keypair_warmup,
    max_version,
    run,
)

HERE = Path(__file__).resolve().parent


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--nova-url", default=os.environ.get("REAL_NOVA_URL", "http://127.0.0.1:18774/v2.1")
    )
    p.add_argument("--nova-base", default=os.environ.get("REAL_NOVA_BASE", "/tmp/real-nova"))
    p.add_argument("--openkeel-url", required=True)
    p.add_argument("--openkeel-pid", type=int, required=True, help="pid (= pgid) of the all-in-one")
    p.add_argument("--versions", default="2.1,latest", help="'latest' = newest both serve")
    p.add_argument("--flavors", type=int, default=100)
    p.add_argument("--keypairs", type=int, default=50)
    p.add_argument("--quick", action="store_true", help="small bounds, for a smoke run")
    p.add_argument("--out", default=None, help="JSON path (default results/foundation-DATE.json)")
    return p.parse_args()


def public_key() -> str:
    """A fresh RSA-2048 public key in OpenSSH format (import, not generation, is measured)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048).public_key()
    raw = key.public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
    return raw.decode() + " fbench@openkeel"


def make_clouds(args: argparse.Namespace) -> tuple[Cloud, Cloud]:
    pid_file = Path(args.nova_base) / "run" / "nova-api.pid"
    nova_pgid = int(pid_file.read_text().strip())
    mariadb = procstats.pid_of_comm("mariadbd") or procstats.pid_of_comm("mysqld")
    nova = Cloud(
        "nova",
        args.nova_url.rstrip("/"),
        server_pids=lambda: procstats.group_pids(nova_pgid),
        extra_pids=lambda: (mariadb,) if mariadb else (),
    )
    ok_pgid = args.openkeel_pid
    openkeel = Cloud(
        "openkeel",
        args.openkeel_url.rstrip("/"),
        server_pids=lambda: procstats.group_pids(ok_pgid) or (ok_pgid,),
    )
    return nova, openkeel


def _vkey(v: str) -> tuple[int, int]:
    major, minor = v.split(".")
    return int(major), int(minor)


async def setup(clouds: tuple[Cloud, ...], args: argparse.Namespace, key: str) -> dict[str, Any]:
    """Untimed: max versions, flavors (same count on both), keypairs."""
    info: dict[str, Any] = {}
    for c in clouds:
        c.max_version = await max_version(c)
    counts = [await ensure_flavors(c, args.flavors) for c in clouds]
    target = max(counts)
    for c in clouds:
        info[c.name] = {
            "max_version": c.max_version,
            "flavors_listed": await ensure_flavors(c, target),
            "keypairs_listed": await ensure_keypairs(c, args.keypairs, key),
        }
    return info


async def bench(
    clouds: tuple[Cloud, ...], versions: list[str], key: str, bounds: Bounds
) -> dict[str, Any]:
    """Every measured phase, Nova then OpenKeel back to back for each."""
    out: dict[str, Any] = {}
    for v in versions:
        for label, path in (
            ("flavors_detail", "/flavors/detail"),
            ("keypairs_list", "/os-keypairs"),
        ):
            for c in clouds:
                print(f"  {c.name:8} GET {path} @{v}", flush=True)
                out.setdefault(v, {}).setdefault(label, {})[c.name] = await get_phase(
                    c, path, v, bounds
                )
        for c in clouds:
            print(f"  {c.name:8} keypair import+delete @{v}", flush=True)
            await keypair_warmup(c, v, key)
            result = await keypair_phase(c, v, key, bounds, v.replace(".", "_"))
            out[v].setdefault("keypair_create_delete", {})[c.name] = result
    return out


def rss(clouds: tuple[Cloud, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for c in clouds:
        s = procstats.sample(c.server_pids())
        out[c.name] = {
            "procs": len(s.pids),
            "rss_mib": list(s.rss_mib),
            "total_mib": s.rss_total_mib,
        }
        extra = c.extra_pids()
        if extra:
            out[c.name]["db_rss_mib"] = procstats.sample(extra).rss_total_mib
    return out


def context() -> dict[str, Any]:
    commit = subprocess.run(
        ["git", "-C", str(HERE.parent), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    return {
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "host_cpus": os.cpu_count(),
        "python": platform.python_version(),
        "loadavg_before": os.getloadavg(),
        "openkeel_commit": commit,
    }


def main() -> int:
    args = parse_args()
    bounds = Bounds(warmup=5, seq_total=30, conc_total=100, kp_total=90) if args.quick else Bounds()
    clouds = make_clouds(args)
    key = public_key()
    results: dict[str, Any] = {"context": context(), "bounds": bounds.__dict__}
    print("setup (not timed): flavors, keypairs", flush=True)
    results["setup"] = run(setup(clouds, args, key))
    latest = min((c.max_version for c in clouds), key=_vkey)
    versions = [latest if v == "latest" else v for v in args.versions.split(",")]
    results["versions"] = versions
    results["rss_idle"] = rss(clouds)
    busy0 = procstats.machine_busy_s()
    results["phases"] = run(bench(clouds, versions, key, bounds))
    results["machine_busy_cpu_s"] = round(procstats.machine_busy_s() - busy0, 1)
    results["rss_after"] = rss(clouds)
    results["loadavg_after"] = os.getloadavg()
    results["table"] = report.rows(results)
    print(report.render(results))
    out = Path(args.out or HERE / "results" / f"foundation-{datetime.date.today()}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=1) + "\n")
    print(f"\nwrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
