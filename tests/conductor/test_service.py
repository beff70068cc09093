"""The conductor's and scheduler's heartbeats (``report_state``) run on threads of their own,
as Nova's timers: a periodic task that hangs (a sweep over slow cell databases) does not make
the role look down."""

from __future__ import annotations

import threading
import time

from openkeel.conductor.service import ConductorService
from openkeel.db.repositories import services
from openkeel.scheduler.service import SchedulerService
from tests.compute.cloud import Cloud
from tests.conftest import CELL1_UUID


def _report_count(cloud: Cloud, host: str, binary: str) -> int:
    with cloud.services.cell_dbs[CELL1_UUID].connect() as conn:
        record = services.get_by_host_and_binary(conn, host, binary)
    assert record is not None
    return record.report_count


def _beats_while_a_task_hangs(
    cloud: Cloud, role: ConductorService | SchedulerService, host: str, binary: str
) -> None:
    release = threading.Event()
    role.start()
    try:
        role.periodic.add("slow", release.wait, 0, run_immediately=True)
        role.periodic.start()  # the scheduler has no periodic task of its own
        before = _report_count(cloud, host, binary)
        deadline = time.monotonic() + 20
        while _report_count(cloud, host, binary) <= before:
            assert time.monotonic() < deadline, f"no {binary} heartbeat"
            cloud.clock.advance(10)  # the runners' threads tick every second
            time.sleep(0.2)
    finally:
        release.set()
        role.stop()


def test_conductor_heartbeat_goes_on_while_a_periodic_task_hangs(cloud: Cloud) -> None:
    conductor = ConductorService(
        cloud.services.conf, cloud.transport, cloud.services.api_db, cloud.services.cell_dbs,
        cloud.placement, clock=cloud.clock, host="cond-1",
        service_db=cloud.services.cell_dbs[CELL1_UUID],
    )  # fmt: skip
    _beats_while_a_task_hangs(cloud, conductor, "cond-1", "nova-conductor")


def test_scheduler_heartbeat_goes_on_while_a_periodic_task_hangs(cloud: Cloud) -> None:
    endpoint = object()  # never called: no message is sent to it
    scheduler = SchedulerService(
        cloud.services.conf, cloud.transport, endpoint,  # type: ignore[arg-type]
        "sched-1", service_db=cloud.services.cell_dbs[CELL1_UUID], clock=cloud.clock,
    )  # fmt: skip
    _beats_while_a_task_hangs(cloud, scheduler, "sched-1", "nova-scheduler")
