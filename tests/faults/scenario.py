"""The end of every fault scenario: let the cloud settle, check, delete everything, check again.

The product must settle on its own within ``OPENKEEL_FAULTS_SETTLE`` seconds (default 90; the
scenarios configure the conductor's orphan sweep to run every few seconds): it may put orphaned
builds in ERROR with a fault, but ERROR servers must then delete like any other. The verdict lists every finding of both checks, the servers that would not go, the
operation outcomes and the error lines of each process's logs, under the seed that replays the
operation mix (``OPENKEEL_FAULTS_SEED``).
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import httpx

from tests.faults.invariants import Report, settle
from tests.faults.processes import Process
from tests.faults.state import ADMIN, Deployment, list_servers
from tests.faults.workload import Workload

SETTLE_SECONDS = float(os.environ.get("OPENKEEL_FAULTS_SETTLE", "90"))
GONE_SECONDS = 60.0


# Orphaned builds and stale operations are settled after seconds, not the production defaults
# (60 s sweeps, 300 s build requests, 900 s operations), so a run can settle within its bound.
CONDUCTOR = {"orphan_sweep_interval": "5", "build_request_timeout": "15"}
DEFAULTS = {"allow_resize_to_same_host": "true", "stale_task_timeout": "20"}


def seed() -> int:
    """``OPENKEEL_FAULTS_SEED`` to replay a run, else a fresh random seed."""
    chosen = os.environ.get("OPENKEEL_FAULTS_SEED")
    return int(chosen) if chosen else random.SystemRandom().randrange(10**6)


@dataclass
class Outcome:
    """What one scenario ended with; :meth:`message` is the failure message."""

    seed: int
    settled_after: float = 0.0
    before: Report = field(default_factory=Report)
    undeletable: list[str] = field(default_factory=list)
    after: Report = field(default_factory=Report)
    notes: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return bool(self.before.findings or self.undeletable or self.after.findings)

    def message(self, workload: Workload, processes: Iterable[Process]) -> str:
        lines = [
            f"fault scenario: replay with OPENKEEL_FAULTS_SEED={self.seed}",
            *self.notes,
            f"-- before deleting everything, {self.settled_after:.0f}s after the last operation: "
            + self.before.summary(),
            f"-- delete-all: {len(self.undeletable)} servers would not go",
            *self.undeletable[:20],
            "-- after deleting everything: " + self.after.summary(),
            f"-- operations ({workload.started} started): "
            + ", ".join(f"{k} x{v}" for k, v in sorted(workload.outcomes.items())),
        ]
        processes = list(processes)
        for process in processes:
            lines.append(f"-- {process.name} ({process.lives} lives), error lines:")
            lines += [f"   {line}" for line in process.notable_lines()]
        subjects = dict.fromkeys(f.subject for f in self.before.findings + self.after.findings)
        for subject in list(subjects)[:8]:
            lines.append(f"-- log lines about {subject}:")
            lines += [f"   operation {op}" for op in workload.journal if subject in op][:6]
            for process in processes:
                lines += [f"   {process.name}: {line}" for line in process.lines_about(subject)]
        return "\n".join(lines)


def inject(
    workload: Workload, rng: random.Random, faults: list[Callable[[], str]], outcome: Outcome
) -> None:
    """Run each fault at a random moment, spread over the workload's operations, in order."""
    for index, fault in enumerate(faults):
        at = (index + 1) * workload.total // (len(faults) + 1) + rng.randint(-12, 12)
        workload.wait_started(at, timeout=180)
        time.sleep(rng.uniform(0, 0.6))  # a random moment inside the operations in flight
        started = workload.started
        outcome.notes.append(f"{fault()} after {started} operations")


def delete_everything(url: str) -> list[str]:
    """DELETE every listed server as admin and wait until the list is empty; what stayed."""
    problems: list[str] = []
    with httpx.Client(base_url=url, timeout=30) as api:
        for uuid, server in list_servers(api).items():
            answer = api.delete(f"/v2.1/servers/{uuid}", headers=ADMIN)
            if answer.status_code not in (204, 404):
                state = f"{server['status']}/{server.get('OS-EXT-STS:task_state')}"
                problems.append(f"{uuid} {state}: DELETE {answer.status_code} {answer.text[:200]}")
        deadline = time.monotonic() + GONE_SECONDS
        while (left := list_servers(api)) and time.monotonic() < deadline:
            time.sleep(0.25)  # polling deletes in progress, bounded by the deadline
    for uuid, server in left.items():
        state = f"{server['status']}/{server.get('OS-EXT-STS:task_state')}"
        problems.append(f"{uuid} still listed {state} {GONE_SECONDS:.0f}s after DELETE")
    return problems


def conclude(deployment: Deployment, projects: list[str], outcome: Outcome) -> Outcome:
    """Settle, check, delete everything, check again (filling ``outcome``)."""
    outcome.before, outcome.settled_after = settle(deployment, projects, SETTLE_SECONDS)
    outcome.undeletable = delete_everything(deployment.api_url)
    outcome.after, _ = settle(deployment, projects, GONE_SECONDS, expect_empty=True)
    return outcome
