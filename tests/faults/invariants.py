"""What must hold once a cloud has settled after faults: nothing stuck, nothing leaked.

Given the API (admin token) and the databases (the API DB URL; the cell DBs are read from its
``cell_mappings``; Placement's DB: ``placement.sqlite`` in the all-in-one's data dir), a
:class:`Report` lists every breach of four invariants:

``transitional``
    a server still BUILD or with a task state, seen by the API (``servers/detail?all_tenants``)
    or in the databases (a live instance ``building`` or with a ``task_state``; a build request
    left in the API DB, which the API shows as BUILD); a live instance's migration neither over
    nor ``finished`` with the instance in VERIFY_RESIZE; a VERIFY_RESIZE server without a
    ``finished`` migration (it can be neither confirmed nor reverted).
``ghost``
    rows that no longer describe a server anybody can see or act on: a live cell instance
    without an instance mapping (or mapped to another cell); an instance mapping without a cell
    and without a build request; a mapping to a cell whose instance is gone, or deleted without
    ``queued_for_delete`` (Nova keeps a deleted server's mapping, flagged, until archiving; that
    is not a ghost); a build request whose mapping already has a cell, or with no mapping; a
    server the list shows but ``GET`` answers 404; a live row the list does not show.
``orphan-allocation``
    a Placement consumer with allocations that is neither a live instance nor the migration of
    a live instance in ``resized`` (``VERIFY_RESIZE``); a live instance on a host (ACTIVE,
    SHUTOFF, VERIFY_RESIZE, ...) without allocations; an instance's allocations not matching its
    flavor or on another node than its own; any allocation of a cell0 instance; a Placement
    consumer left without allocations (it refuses later writes).
``quota``
    ``GET /os-quota-sets/{p}/detail`` ``in_use`` and ``GET /limits?tenant_id={p}`` totals
    (instances, cores, ram) differ from the servers that exist (``GET /servers/{id}`` 200) in
    project ``p``.

``fault``
    an ERROR server whose ``GET`` shows no ``fault``.

``expect_empty`` (after deleting everything) adds ``leftover``: any server, live row, build
request or allocation left at all.

Used by the fault-injection scenarios of this folder; reads only (never repairs).
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

import httpx
import sqlalchemy as sa

from tests.faults.state import (
    ApiState,
    DbState,
    Deployment,
    Instance,
    Mapping,
    is_transitional,
    read_api,
    read_databases,
)

HOSTED_VM_STATES = frozenset({"active", "stopped", "resized", "paused", "suspended", "rescued"})
CELL0 = "00000000-0000-0000-0000-000000000000"
RESOURCES = ("instances", "cores", "ram")
MIGRATION_OVER = frozenset({"confirmed", "reverted", "error", "failed", "done", "completed",
                            "cancelled"})  # fmt: skip


@dataclass(frozen=True)
class Finding:
    """One breach: which invariant, about what (server uuid, project, consumer), and how."""

    invariant: str
    subject: str
    detail: str

    def __str__(self) -> str:
        return f"[{self.invariant}] {self.subject}: {self.detail}"


@dataclass
class Report:
    """Every finding of one check, plus the counts it saw."""

    findings: list[Finding] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)

    def add(self, invariant: str, subject: str, detail: str) -> None:
        self.findings.append(Finding(invariant, subject, detail))

    def of(self, invariant: str) -> list[Finding]:
        return [f for f in self.findings if f.invariant == invariant]

    def summary(self, limit: int = 40) -> str:
        """Counts per invariant, then the first ``limit`` findings, one a line."""
        per: dict[str, int] = defaultdict(int)
        for finding in self.findings:
            per[finding.invariant] += 1
        head = ", ".join(f"{k}={v}" for k, v in sorted(per.items())) or "no findings"
        seen = ", ".join(f"{k}={v}" for k, v in sorted(self.counts.items()))
        lines = [f"{head} (saw {seen})", *(str(f) for f in self.findings[:limit])]
        if len(self.findings) > limit:
            lines.append(f"... and {len(self.findings) - limit} more")
        return "\n".join(lines)


# --- the checks -----------------------------------------------------------------------------


def check_transitional(db: DbState, api: ApiState, report: Report) -> None:
    for uuid, server in sorted(api.listed.items()):
        if is_transitional(server):
            state = f"{server['status']}/{server.get('OS-EXT-STS:task_state')}"
            report.add("transitional", uuid, f"API lists it {state} ({server['tenant_id']})")
    for inst in db.live_instances():
        if inst.vm_state == "building" or inst.task_state is not None:
            where = "cell0" if inst.cell == CELL0 else f"cell {inst.cell[:8]}"
            detail = f"{where} row vm_state={inst.vm_state} task_state={inst.task_state}"
            report.add("transitional", inst.uuid, detail + f" host={inst.host}")
    for uuid, project in sorted(db.build_requests.items()):
        report.add("transitional", uuid, f"build request left in the API DB ({project})")
    _check_migrations(db, report)


def _check_migrations(db: DbState, report: Report) -> None:
    """A live instance's migration must be over, or ``finished`` for a ``resized`` instance
    (VERIFY_RESIZE, waiting for confirm or revert); nothing else can move it on."""
    finished = {owner for owner, status in db.migrations.values() if status == "finished"}
    for migration, (owner, status) in sorted(db.migrations.items()):
        holder = db.live(owner)
        if holder is None or status in MIGRATION_OVER:
            continue
        if status != "finished" or holder.vm_state != "resized":
            detail = f"migration {migration} {status} of a {holder.vm_state}/{holder.task_state}"
            report.add("transitional", owner, detail + " instance")
    for inst in db.live_instances():
        if inst.vm_state == "resized" and inst.uuid not in finished:
            report.add("transitional", inst.uuid, "VERIFY_RESIZE without a finished migration")


def check_ghost_rows(db: DbState, api: ApiState, report: Report) -> None:
    for inst in db.live_instances():
        mapping = db.mappings.get(inst.uuid)
        if mapping is None:
            report.add("ghost", inst.uuid, f"live {inst.vm_state} cell row without a mapping")
        elif mapping.cell != inst.cell:
            report.add("ghost", inst.uuid, f"live row in {inst.cell[:8]}, mapped to {mapping.cell}")
    for uuid, mapping in sorted(db.mappings.items()):
        _check_mapping(db, uuid, mapping, report)
    for uuid in sorted(db.build_requests):
        mapping = db.mappings.get(uuid)
        if mapping is None:
            report.add("ghost", uuid, "build request without an instance mapping")
        elif mapping.cell is not None:
            report.add("ghost", uuid, f"build request whose mapping has cell {mapping.cell[:8]}")
    _check_visibility(db, api, report)


def _check_mapping(db: DbState, uuid: str, mapping: Mapping, report: Report) -> None:
    if mapping.cell is None:
        if uuid not in db.build_requests:
            flag = " (queued_for_delete)" if mapping.queued_for_delete else ""
            report.add("ghost", uuid, f"mapping without cell and without build request{flag}")
        return
    rows = [i for i in db.instances.get(uuid, []) if i.cell == mapping.cell]
    if not rows:
        report.add("ghost", uuid, f"mapping to cell {mapping.cell[:8]} holding no such instance")
    elif all(i.deleted for i in rows) and not mapping.queued_for_delete:
        report.add("ghost", uuid, "instance deleted but its mapping not queued_for_delete")


def _check_visibility(db: DbState, api: ApiState, report: Report) -> None:
    for uuid, server in sorted(api.listed.items()):
        if api.shown.get(uuid, {}) is None:
            state = f"{server['status']}/{server.get('OS-EXT-STS:task_state')}"
            report.add("ghost", uuid, f"listed {state} but GET answers 404")
    live = {i.uuid for i in db.live_instances()} | set(db.build_requests)
    for uuid in sorted(live - set(api.listed)):
        report.add("ghost", uuid, "live in the databases but missing from the list")


def check_allocations(db: DbState, report: Report) -> None:
    for consumer, by_rp in sorted(db.allocations.items()):
        _check_consumer(db, consumer, by_rp, report)
    for inst in db.live_instances():
        hosted = inst.cell != CELL0 and inst.host and inst.vm_state in HOSTED_VM_STATES
        if hosted and inst.uuid not in db.allocations:
            report.add(
                "orphan-allocation",
                inst.uuid,
                f"live {inst.vm_state} instance on {inst.host} without allocations",
            )


def check_empty_consumers(db: DbState, report: Report) -> None:
    """A Placement consumer without allocations is invisible to GET but refuses every write
    that does not know its generation: its server can never hold allocations again."""
    for consumer in sorted(db.empty_consumers):
        report.add("orphan-allocation", consumer, "Placement consumer left without allocations")


def _check_consumer(
    db: DbState, consumer: str, by_rp: dict[str, dict[str, int]], report: Report
) -> None:
    inst = db.live(consumer)
    if inst is not None:
        _check_instance_allocation(inst, by_rp, report)
        return
    if consumer in db.migrations:
        owner, status = db.migrations[consumer]
        holder = db.live(owner)
        if holder is not None and holder.vm_state == "resized":
            return
        state = "gone" if holder is None else f"{holder.vm_state}/{holder.task_state}"
        detail = f"allocations {by_rp} of migration ({status}) of {owner}, instance {state}"
        report.add("orphan-allocation", consumer, detail)
        return
    known = "deleted instance" if consumer in db.instances else "no instance"
    if consumer in db.build_requests:
        known = "unscheduled build request"
    report.add("orphan-allocation", consumer, f"allocations {by_rp} held for {known}")


def _check_instance_allocation(
    inst: Instance, by_rp: dict[str, dict[str, int]], report: Report
) -> None:
    if inst.cell == CELL0:
        report.add("orphan-allocation", inst.uuid, f"cell0 (buried) instance holds {by_rp}")
        return
    vcpu = sum(rc.get("VCPU", 0) for rc in by_rp.values())
    ram = sum(rc.get("MEMORY_MB", 0) for rc in by_rp.values())
    if (vcpu, ram) != (inst.vcpus, inst.memory_mb) or set(by_rp) != {inst.node}:
        detail = (
            f"{inst.vm_state}/{inst.task_state} on node {inst.node} with flavor "
            f"{inst.vcpus} VCPU/{inst.memory_mb} MB holds {by_rp}"
        )
        report.add("orphan-allocation", inst.uuid, detail)


def check_quota(api: ApiState, report: Report) -> None:
    expected: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(RESOURCES, 0))
    for server in api.shown.values():
        if server is None or server["status"] in ("DELETED", "SOFT_DELETED"):
            continue
        used = expected[server["tenant_id"]]
        used["instances"] += 1
        used["cores"] += int(server["flavor"]["vcpus"])
        used["ram"] += int(server["flavor"]["ram"])
    for project in sorted(api.quota_in_use):
        want = expected[project]
        for source, got in (
            ("os-quota-sets detail in_use", api.quota_in_use[project]),
            ("limits total*Used", api.limits_used[project]),
        ):
            if got != want:
                report.add("quota", project, f"{source} {got} but existing servers use {want}")


def check_faults(api: ApiState, report: Report) -> None:
    """An ERROR server says why (its ``fault``), so its owner knows what happened."""
    for uuid, server in sorted(api.shown.items()):
        if server is not None and server["status"] == "ERROR" and not server.get("fault"):
            report.add("fault", uuid, "ERROR without a fault")


def check_empty(db: DbState, api: ApiState, report: Report) -> None:
    """After deleting everything: not one server, row or allocation left."""
    live = sorted({i.uuid for i in db.live_instances()})
    for what, items in (
        ("listed server", sorted(api.listed)),
        ("live instance row", live),
        ("build request", sorted(db.build_requests)),
        ("allocation consumer", sorted(db.allocations)),
    ):
        for item in items:
            report.add("leftover", item, f"{what} left after deleting everything")


def projects_of(db: DbState) -> set[str]:
    return (
        {i.project for rows in db.instances.values() for i in rows if i.project}
        | set(db.build_requests.values())
        | {m.project for m in db.mappings.values()}
    )


def check(
    deployment: Deployment, projects: Iterable[str] = (), *, expect_empty: bool = False
) -> Report:
    """Read the databases and the API once and report every breach."""
    db = read_databases(deployment)
    with httpx.Client(base_url=deployment.api_url, timeout=30) as api:
        known = set(db.mappings) | set(db.build_requests) | set(db.instances)
        state = read_api(api, {*projects, *projects_of(db)}, also=known)
    return evaluate(_reread_if_moved(deployment, db), state, expect_empty=expect_empty)


def evaluate(db: DbState, state: ApiState, *, expect_empty: bool = False) -> Report:
    """Every breach in one reading of the databases and the API."""
    report = Report(
        counts={
            "listed": len(state.listed),
            "live_rows": sum(1 for _ in db.live_instances()),
            "build_requests": len(db.build_requests),
            "consumers": len(db.allocations),
        }
    )
    check_transitional(db, state, report)
    check_ghost_rows(db, state, report)
    check_allocations(db, report)
    check_empty_consumers(db, report)
    check_quota(state, report)
    check_faults(state, report)
    if expect_empty:
        check_empty(db, state, report)
    return report


def _reread_if_moved(deployment: Deployment, before: DbState) -> DbState:
    """The API was read after the databases: read them again and keep the second reading
    only when it agrees (the cloud is meant to be quiet; a difference means it still moves)."""
    after = read_databases(deployment)
    return after if after == before else before


def settle(
    deployment: Deployment, projects: Iterable[str], timeout: float, *, expect_empty: bool = False
) -> tuple[Report, float]:
    """Check every 2 s until nothing is found or ``timeout`` passes (the product may sweep
    orphans periodically); the last report and the seconds it took."""
    start = time.monotonic()
    while True:
        try:
            report = check(deployment, projects, expect_empty=expect_empty)
        except (httpx.HTTPError, sa.exc.OperationalError) as exc:
            report = Report()
            report.add("check", "-", f"could not read the cloud: {exc!r}")
        elapsed = time.monotonic() - start
        if not report.findings or elapsed > timeout:
            return report, elapsed
        time.sleep(2)  # polling the product settling on its own, bounded by timeout
