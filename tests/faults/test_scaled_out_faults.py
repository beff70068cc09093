"""Faults in the scaled-out shape: kill -9 of single roles, broker and database restarts.

api, conductor, scheduler and compute run as four processes on RabbitMQ with PostgreSQL
databases (``tests/faults/scaled_out.py``). While the operation mix of
``tests/faults/workload.py`` runs, each role is killed with SIGKILL once, in a random order at
random moments, stays down a random while (casts to it wait in, or miss, its queue) and starts
again. Restarting the shared RabbitMQ and PostgreSQL disturbs every other test on the machine,
so that scenario runs only with ``OPENKEEL_FAULTS_DISRUPTIVE=1`` (CI sets it). Afterwards the
invariants of ``tests/faults/invariants.py`` must hold, before and after deleting everything.
"""

from __future__ import annotations

import functools
import os
import random
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from tests.db.backends import DatabaseFactory, database_factory
from tests.faults.scaled_out import ROLES, ScaledOut, scaled_out
from tests.faults.scenario import Outcome, conclude, inject, seed
from tests.faults.workload import Workload, create_flavors, set_quotas

__all__ = ["database_factory"]
PROJECTS = ["fault-c", "fault-d"]
DISRUPTIVE = os.environ.get("OPENKEEL_FAULTS_DISRUPTIVE") == "1"


def _kill_role(cloud: ScaledOut, name: str, workload: Workload, rng: random.Random) -> str:
    if name == "api":
        workload.up.clear()
    process = cloud.processes[name]
    process.kill()
    down = rng.uniform(0, 3)
    time.sleep(down)  # the role stays down a random while: that is the fault, not a wait
    process.start()
    if name == "api":
        cloud.wait_api()
        workload.up.set()
    else:
        process.wait_ready(f"OpenKeel {name} running")
    return f"kill -9 of {name}, down {down:.1f}s"


def _run(
    cloud: ScaledOut,
    chosen: int,
    operations: int,
    faults: Callable[[Workload], list[Callable[[], str]]],
) -> None:
    rng = random.Random(chosen)
    with httpx.Client(base_url=cloud.url, timeout=30) as admin:
        create_flavors(admin)
        set_quotas(admin, PROJECTS, instances=25)
    workload = Workload(cloud.url, PROJECTS, chosen, total=operations, threads=4)
    outcome = Outcome(chosen)
    workload.start()
    try:
        inject(workload, rng, faults(workload), outcome)
        workload.join(timeout=300)
        conclude(cloud.deployment, PROJECTS, outcome)
    finally:
        workload.up.set()
    report = outcome.message(workload, cloud.processes.values())
    print(report)  # shown with -rP: what a passing run went through
    assert not outcome.failed, report


def test_kill_9_of_each_role_during_operations(
    tmp_path: Path, database_factory: DatabaseFactory
) -> None:
    chosen = seed()
    order = random.Random(chosen).sample(ROLES, len(ROLES))
    rng = random.Random(chosen + 1)
    with scaled_out(tmp_path, database_factory) as cloud:

        def faults(workload: Workload) -> list[Callable[[], str]]:
            return [functools.partial(_kill_role, cloud, name, workload, rng) for name in order]

        _run(cloud, chosen, 120, faults)


def _restart_broker(down: float) -> str:
    try:
        subprocess.run(["rabbitmqctl", "stop_app"], check=True, capture_output=True, timeout=120)
        time.sleep(down)  # the broker stays down a while: that is the fault, not a wait
    finally:  # never leave the shared broker stopped
        subprocess.run(["rabbitmqctl", "start_app"], check=True, capture_output=True, timeout=120)
    return f"RabbitMQ stop_app, down {down:.1f}s, start_app"


def _restart_database() -> str:
    version = sorted(os.listdir("/etc/postgresql"))[-1]
    command = ["pg_ctlcluster", "--skip-systemctl-redirect", version, "main", "restart"]
    subprocess.run([*command, "-m", "fast"], check=True, capture_output=True, timeout=120)
    return f"PostgreSQL {version} restart (fast)"


@pytest.mark.disruptive
@pytest.mark.skipif(
    not DISRUPTIVE,
    reason="restarts the shared RabbitMQ and PostgreSQL: set OPENKEEL_FAULTS_DISRUPTIVE=1",
)
def test_broker_and_database_restarts_during_operations(
    tmp_path: Path, database_factory: DatabaseFactory
) -> None:
    chosen = seed()
    rng = random.Random(chosen + 2)
    with scaled_out(tmp_path, database_factory) as cloud:

        def faults(_workload: Workload) -> list[Callable[[], str]]:
            both = [lambda: _restart_broker(rng.uniform(0.5, 3)), _restart_database]
            return rng.sample(both, 2)

        _run(cloud, chosen, 80, faults)
