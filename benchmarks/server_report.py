"""Turns the servers benchmark's raw results into the metric / Nova / OpenKeel / ratio table.

Used by benchmarks/servers.py. Ratio = OpenKeel speed / Nova speed (nova/openkeel for times,
costs and memory), so > 1 means OpenKeel is better; rows that only one cloud ran show "-".
A Nova value marked "~" is an estimate, not a measurement.
"""

from __future__ import annotations

from typing import Any


def _row(
    metric: str, unit: str, nova: float | None, ok: float | None, estimate: bool = False
) -> dict[str, Any]:
    ratio = round(nova / ok, 1) if nova and ok else None
    return {
        "metric": metric,
        "unit": unit,
        "nova": nova,
        "openkeel": ok,
        "ratio": ratio,
        "nova_estimate": estimate,
    }


def _both(
    phase: dict[str, Any], metric: str, unit: str, key: str, scale: float = 1.0
) -> dict[str, Any]:
    def get(cloud: str) -> float | None:
        value = phase.get(cloud, {}).get(key)
        return None if value is None else round(value * scale, 3)

    return _row(metric, unit, get("nova"), get("openkeel"))


def small_rows(results: dict[str, Any]) -> list[dict[str, Any]]:
    small = results["small"]
    n, c = results["args"]["small"], results["args"]["clients"]
    boot, show, detail, delete = small["boot"], small["show"], small["detail"], small["delete"]
    return [
        _both(boot, f"{n} servers: first POST -> all ACTIVE, {c} clients", "s", "all_active_s"),
        _both(boot, f"{n} servers: all POST /servers returned", "s", "all_posted_s"),
        _both(boot, f"{n} servers: POST /servers p50", "ms", "post_p50_ms"),
        _both(boot, f"{n} servers: stack CPU per boot", "ms", "stack_cpu_ms_per_boot"),
        _both(show, f"GET /servers/{{id}} p50, {n} present", "ms", "p50_ms"),
        _both(show, f"GET /servers/{{id}} p99, {n} present", "ms", "p99_ms"),
        _both(
            show,
            f"GET /servers/{{id}} stack CPU per req, {n} present",
            "ms",
            "stack_cpu_ms_per_req",
        ),
        _both(detail, f"GET /servers/detail p50, {n} present", "ms", "p50_ms"),
        _both(detail, f"GET /servers/detail p99, {n} present", "ms", "p99_ms"),
        _both(delete, f"delete {n}: all DELETEs returned", "s", "all_delete_returned_s"),
        _both(delete, f"delete {n}: first DELETE -> none listed (404)", "s", "all_gone_s"),
    ]


def big_rows(results: dict[str, Any]) -> list[dict[str, Any]]:
    args, big = results["args"], results["big"]
    ok = big["openkeel"]
    nova_small = results["small"]["boot"]["nova"].get("all_active_s")
    nova_big = big.get("nova", {}).get("boot_big", {})
    n, total, w = args["big"], args["list_total"], 50
    if nova_big.get("all_active_s") and not nova_big.get("cut_by_deadline"):
        row = _row(
            f"{n} servers: first POST -> all ACTIVE",
            "s",
            nova_big["all_active_s"],
            ok["boot_big"]["all_active_s"],
        )
    else:
        est = round(nova_small * n / args["small"], 1) if nova_small else None
        row = _row(
            f"{n} servers: first POST -> all ACTIVE",
            "s",
            est,
            ok["boot_big"]["all_active_s"],
            estimate=True,
        )
    out = [row]
    b, m = ok["boot_big"], ok["boot_more"]
    # wall per boot in a window = the build pipeline's throughput; CPU is compared over whole
    # phases (0 -> n and n -> total), since a window's CPU is skewed by queued POSTs
    for label, run, seg in (
        (f"first {w} of {n}", b, f"first_{w}"),
        (f"last {w} of {n}", b, f"last_{w}"),
        (f"last {w} of {total}", m, f"last_{w}"),
    ):
        if seg in run:
            wall = run[seg]["wall_ms_per_boot"]
            out.append(_row(f"OpenKeel wall per boot, {label}", "ms", None, wall))
    out.append(
        _row(f"OpenKeel CPU per boot, 0 -> {n} present", "ms", None, b.get("stack_cpu_ms_per_boot"))
    )
    out.append(
        _row(
            f"OpenKeel CPU per boot, {n} -> {total} present",
            "ms",
            None,
            m.get("stack_cpu_ms_per_boot"),
        )
    )
    out += [
        _row(f"{total - n} more servers ({n} present) -> all ACTIVE", "s", None, m["all_active_s"]),
        _row(
            f"GET /servers/detail p50, {ok['detail'].get('servers_listed')} listed",
            "ms",
            None,
            ok["detail"]["p50_ms"],
        ),
        _row(
            f"GET /servers/detail p99, {ok['detail'].get('servers_listed')} listed",
            "ms",
            None,
            ok["detail"]["p99_ms"],
        ),
        _row(f"GET /servers/{{id}} p50, {total} present", "ms", None, ok["show"]["p50_ms"]),
        _row(f"GET /servers/{{id}} p99, {total} present", "ms", None, ok["show"]["p99_ms"]),
        _row(
            f"delete {total}: first DELETE -> none listed (404)",
            "s",
            None,
            ok["delete"]["all_gone_s"],
        ),
    ]
    return out


def rss_rows(results: dict[str, Any]) -> list[dict[str, Any]]:
    n = results["args"]["small"]
    nova, ok = results["small"]["rss"]["nova"], results["small"]["rss"]["openkeel"]
    ok_mib = ok["total_mib"]
    big = results["big"]["openkeel"]["rss"]["total_mib"]
    total = results["args"]["list_total"]
    return [
        _row(
            f"RSS, {n} servers: Nova api+conductor+scheduler+compute "
            f"({nova['core_procs']} procs) / OpenKeel (1)",
            "MiB",
            nova["core_mib"],
            ok_mib,
        ),
        _row(
            f"RSS, {n} servers: all Nova services incl. placement, glance "
            f"({nova['all_procs']} procs)",
            "MiB",
            nova["all_mib"],
            ok_mib,
        ),
        _row(
            f"RSS, {n} servers: + MariaDB + RabbitMQ",
            "MiB",
            round(nova["all_mib"] + nova["mariadb_rabbitmq_mib"], 1),
            ok_mib,
        ),
        _row(f"RSS of OpenKeel with {total} servers", "MiB", None, big),
    ]


def rows(results: dict[str, Any]) -> list[dict[str, Any]]:
    return small_rows(results) + big_rows(results) + rss_rows(results)


def _fmt(value: float | None, estimate: bool = False) -> str:
    if value is None:
        return "-"
    text = f"{value:,.2f}" if value < 100 else f"{value:,.0f}"
    return "~" + text if estimate else text


def render(results: dict[str, Any]) -> str:
    """The table as fixed-width text, then errors and machine load."""
    table = results["table"]
    width = max(len(r["metric"]) for r in table) + 2
    lines = [f"{'metric':<{width}}{'unit':>5}{'Nova':>10}{'OpenKeel':>10}{'ratio':>8}"]
    lines.append("-" * len(lines[0]))
    for r in table:
        ratio = "-" if r["ratio"] is None else f"{r['ratio']}x"
        lines.append(
            f"{r['metric']:<{width}}{r['unit']:>5}{_fmt(r['nova'], r['nova_estimate']):>10}"
            f"{_fmt(r['openkeel']):>10}{ratio:>8}"
        )
    if any(r["nova_estimate"] for r in table):
        lines.append(
            "~ Nova estimate: its 50-boot rate scaled linearly (a lower bound; its "
            "per-boot cost grows with the servers on the host)"
        )
    lines += _problems(results)
    ctx = results["context"]
    lines.append(
        f"machine busy CPU-s during the run: {results['machine_busy_cpu_s']} (2 cores; "
        f"load avg before {ctx['loadavg_before'][0]:.2f}, after {results['loadavg_after'][0]:.2f})"
    )
    for cloud, boot in results["small"]["boot"].items():
        if "other_load_cores" in boot:
            lines.append(
                f"other processes' load during {cloud}'s boot phase: "
                f"{boot['other_load_cores']} cores of 2"
            )
    return "\n".join(lines)


def _problems(results: dict[str, Any]) -> list[str]:
    found = []
    phases = [("small " + k, v) for k, v in results["small"].items() if k != "rss"]
    big = results["big"]
    phases += [(f"big {k}", {c: big[c][k]}) for c in big for k in big[c] if "rss" not in k]
    for name, per_cloud in phases:
        for cloud, data in per_cloud.items():
            bad = {
                k: data.get(k)
                for k in (
                    "errors",
                    "post_errors",
                    "errored",
                    "still_listed",
                    "not_404_after",
                )
                if data.get(k)
            }
            if data.get("cut_by_deadline") and "requested" in data:  # a boot, not a GET run
                bad["cut_by_deadline"] = True
            if bad:
                found.append(f"PROBLEM {cloud} {name}: {bad} {data.get('first_error', '')}")
    return found
