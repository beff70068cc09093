"""The ``instance_usage_audit`` periodic task with a fake clock: one task_log row per host and
completed period, counting the instances active on the host then; off unless enabled."""

from __future__ import annotations

import datetime

import sqlalchemy as sa

from openkeel.compute.usage_audit import instance_usage_audit
from openkeel.db.schema import cell as cell_schema
from tests.compute.cloud import Cloud
from tests.conftest import CELL1_UUID


def _rows(cloud: Cloud) -> list[sa.Row[tuple[object, ...]]]:
    table = cell_schema.task_log
    with cloud.services.cell_dbs[CELL1_UUID].connect() as conn:
        query = sa.select(table.c.host, table.c.state, table.c.task_items, table.c.errors,
                          table.c.period_beginning, table.c.period_ending, table.c.message)  # fmt: skip
        return list(conn.execute(query.order_by(table.c.id)))


def test_audit_is_off_by_default(cloud: Cloud) -> None:
    compute = cloud.compute().start(background=False)
    compute.periodic.run("instance_usage_audit")
    assert _rows(cloud) == []


def test_each_completed_period_is_audited_once(cloud: Cloud) -> None:
    compute = cloud.compute(instance_usage_audit=True, instance_usage_audit_period="hour")
    compute.start(background=False)
    now = cloud.clock.now()
    cloud.instance(compute, vm_state="active", task_state=None, launched_at=now - datetime.timedelta(hours=3))  # fmt: skip
    # Launched after the last completed hour ended: not counted for it.
    cloud.instance(compute, vm_state="active", task_state=None, launched_at=now)
    assert instance_usage_audit(compute.host)
    assert not instance_usage_audit(compute.host)  # the period is done
    ((host, state, items, errors, begin, end, message),) = _rows(cloud)
    assert (host, state, items, errors) == (compute.hostname, "DONE", 1, 0)
    assert end - begin == datetime.timedelta(hours=1) and end <= now
    assert message.startswith(f"Instance usage audit ran for host {compute.hostname}, 1 instances in ")  # fmt: skip
    cloud.clock.advance(3600)
    assert "instance_usage_audit" in compute.periodic.run_due()
    rows = _rows(cloud)
    assert [r.task_items for r in rows] == [1, 2]
