"""kill -9 of the all-in-one at random moments of 200 operations; nothing stuck or leaked after.

The all-in-one (SQLite, in-process messaging, embedded Placement) runs as a subprocess; a
random mix of boots (networks none/auto), boot-then-delete, resizes with confirm/revert,
stop/start and deletes runs from a few client threads; the process is killed with SIGKILL
``KILLS`` times at random points and started again on the same data dir. Then the cloud must
settle on its own and the invariants of ``tests/faults/invariants.py`` hold, before and after
deleting every server.
"""

from __future__ import annotations

import random
from pathlib import Path

import httpx

from tests.e2e.conftest import _free_port
from tests.faults.processes import Process, all_in_one, nova_conf, wait_http
from tests.faults.scenario import CONDUCTOR, DEFAULTS, Outcome, conclude, inject, seed
from tests.faults.state import Deployment
from tests.faults.workload import Workload, create_flavors, set_quotas

OPERATIONS = 200
KILLS = 4
PROJECTS = ["fault-a", "fault-b"]


def _kill_and_restart(aio: Process, workload: Workload, url: str) -> str:
    workload.up.clear()
    aio.kill()
    aio.start()
    wait_http(url + "/v2.1/", [aio])
    workload.up.set()
    return f"kill -9 of the all-in-one (life {aio.lives - 1})"


def test_kill_9_of_the_all_in_one_during_200_operations(tmp_path: Path) -> None:
    chosen = seed()
    rng = random.Random(chosen)
    port = _free_port()
    conf = nova_conf(
        tmp_path / "nova.conf",
        DEFAULT=DEFAULTS,
        conductor=CONDUCTOR,
        # The workload acts as projects by name (user:project tokens).
        api={"auth_strategy": "noauth2"},
    )
    aio = all_in_one(tmp_path, port, conf)
    root = f"http://127.0.0.1:{port}"
    workload = Workload(root, PROJECTS, chosen, total=OPERATIONS, threads=5)
    outcome = Outcome(chosen)
    aio.start()
    try:
        wait_http(root + "/v2.1/", [aio])
        with httpx.Client(base_url=root, timeout=30) as admin:
            create_flavors(admin)
            set_quotas(admin, PROJECTS, instances=25)
        workload.start()
        faults = [lambda: _kill_and_restart(aio, workload, root)] * KILLS
        inject(workload, rng, faults, outcome)
        workload.join(timeout=300)
        deployment = Deployment(
            root, f"sqlite:///{tmp_path / 'nova_api.sqlite'}",
            f"sqlite:///{tmp_path / 'placement.sqlite'}",
        )  # fmt: skip
        conclude(deployment, PROJECTS, outcome)
    finally:
        workload.up.set()
        aio.stop()
    report = outcome.message(workload, [aio])
    print(report)  # shown with -rP: what a passing run went through
    assert not outcome.failed, report
