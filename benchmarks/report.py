"""Turns the foundation benchmark's raw results into the metric / Nova / OpenKeel / ratio table.

Used by benchmarks/foundation.py. The ratio is always "OpenKeel speed / Nova speed": for
rates it is openkeel/nova, for latencies and CPU costs nova/openkeel (so >1 means faster).
"""

from __future__ import annotations

from typing import Any

# (row label, phase key, sub-key, field, unit, higher_is_better)
GET_FIELDS = (
    ("p50, 1 client", "sequential", "p50_ms", "ms", False),
    ("p99, 1 client", "sequential", "p99_ms", "ms", False),
    ("req/s, {c} clients", "concurrent", "per_s", "req/s", True),
    ("p50, {c} clients", "concurrent", "p50_ms", "ms", False),
    ("server CPU per req", "concurrent", "server_cpu_ms_per_req", "ms", False),
)
GET_PHASES = (("flavors_detail", "GET /flavors/detail"), ("keypairs_list", "GET /os-keypairs"))


def _ratio(nova: float, ok: float, higher_is_better: bool) -> float | None:
    if not nova or not ok:
        return None
    return round(ok / nova if higher_is_better else nova / ok, 1)


def _row(metric: str, unit: str, nova: float, ok: float, better_high: bool) -> dict[str, Any]:
    return {
        "metric": metric,
        "unit": unit,
        "nova": nova,
        "openkeel": ok,
        "ratio": _ratio(nova, ok, better_high),
    }


def rows(results: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per compared number."""
    out: list[dict[str, Any]] = []
    clients = results["bounds"]["conc_clients"]
    kp_clients = results["bounds"]["kp_clients"]
    for version, phases in results["phases"].items():
        for key, title in GET_PHASES:
            nova, ok = phases[key]["nova"], phases[key]["openkeel"]
            for label, sub, field, unit, high in GET_FIELDS:
                metric = f"{title} @{version} {label.format(c=clients)}"
                out.append(_row(metric, unit, nova[sub][field], ok[sub][field], high))
        kp = phases["keypair_create_delete"]
        for op in ("create", "delete"):
            metric = f"keypair {'import' if op == 'create' else 'delete'} @{version} ops/s, {kp_clients} clients"
            out.append(
                _row(metric, "ops/s", kp["nova"][op]["per_s"], kp["openkeel"][op]["per_s"], True)
            )
        metric = f"keypair import+delete @{version} server CPU per op"
        out.append(
            _row(
                metric,
                "ms",
                kp["nova"]["server_cpu_ms_per_op"],
                kp["openkeel"]["server_cpu_ms_per_op"],
                False,
            )
        )
    rss = results["rss_after"]
    nova_rss, ok_rss = rss["nova"]["total_mib"], rss["openkeel"]["total_mib"]
    out.append(
        _row(
            f"RSS of API processes ({rss['nova']['procs']} Nova / {rss['openkeel']['procs']} OpenKeel)",
            "MiB",
            nova_rss,
            ok_rss,
            False,
        )
    )
    if "db_rss_mib" in rss["nova"]:
        out.append(
            _row(
                "RSS incl. Nova's MariaDB",
                "MiB",
                round(nova_rss + rss["nova"]["db_rss_mib"], 1),
                ok_rss,
                False,
            )
        )
    return out


def _fmt(value: float) -> str:
    return f"{value:,.2f}" if value < 100 else f"{value:,.0f}"


def render(results: dict[str, Any]) -> str:
    """The table as fixed-width text."""
    table = results["table"]
    width = max(len(r["metric"]) for r in table) + 2
    lines = [f"{'metric':<{width}}{'unit':>7}{'Nova':>11}{'OpenKeel':>11}{'ratio':>9}"]
    lines.append("-" * len(lines[0]))
    for r in table:
        ratio = "n/a" if r["ratio"] is None else f"{r['ratio']}x"
        lines.append(
            f"{r['metric']:<{width}}{r['unit']:>7}{_fmt(r['nova']):>11}"
            f"{_fmt(r['openkeel']):>11}{ratio:>9}"
        )
    errors = _errors(results)
    if errors:
        lines.append("\nERRORS: " + "; ".join(errors))
    lines.append(_contention(results))
    lines.append(
        f"machine busy CPU-s during the measured phases: {results['machine_busy_cpu_s']}"
        f" (2 cores; load avg before {results['context']['loadavg_before'][0]:.2f})"
    )
    return "\n".join(lines)


def _contention(results: dict[str, Any]) -> str:
    """Mean CPU load (cores) of other processes during each cloud's GET phases."""
    loads: dict[str, list[float]] = {}
    for phases in results["phases"].values():
        for key, _ in GET_PHASES:
            for cloud, data in phases[key].items():
                for sub in ("sequential", "concurrent"):
                    loads.setdefault(cloud, []).append(data[sub]["other_load_cores"])
    parts = [f"{c} {sum(v) / len(v):.2f}" for c, v in loads.items()]
    return "\nother processes' load during the GET phases (cores of 2): " + ", ".join(parts)


def _errors(results: dict[str, Any]) -> list[str]:
    found = []
    for version, phases in results["phases"].items():
        for key, per_cloud in phases.items():
            for cloud, data in per_cloud.items():
                for sub, value in data.items():
                    if isinstance(value, dict) and value.get("errors"):
                        found.append(
                            f"{cloud} {key}@{version} {sub}: {value['errors']} x {value.get('first_error')}"
                        )
    return found
