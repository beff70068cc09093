"""Instance usage audit log (GET /os-instance_usage_audit_log[/{before}]): how far the compute
hosts got with the ``instance_usage_audit`` task for the last completed audit period (before a
given time), from their ``task_log`` rows, as Nova reports it.

Called by the instance_usage_audit_log resource. Hosts are those of every nova-compute service,
disabled ones included (they can have instances); the period is ``[DEFAULT]
instance_usage_audit_period``'s.
"""

from __future__ import annotations

import datetime
from typing import Any

from openkeel.api.services import ApiServices
from openkeel.db.repositories import services as services_repo
from openkeel.db.repositories import task_log
from openkeel.domain.audit_periods import last_completed_audit_period

TASK = "instance_usage_audit"


def audit_log(services: ApiServices, before: datetime.datetime | None) -> dict[str, Any]:
    """Nova's audit log document for the period last completed before ``before`` (now)."""
    now = before or datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
    begin, end = last_completed_audit_period(str(services.conf.instance_usage_audit_period), now)
    logs: list[task_log.TaskLogRecord] = []
    hosts: set[str] = set()
    for engine in (services.cell_dbs or {}).values():
        with engine.connect() as conn:
            logs.extend(task_log.for_period(conn, TASK, begin, end))
            hosts.update(s.host for s in services_repo.list_services(conn, None, "nova-compute"))
    seen = {t.host for t in logs}
    done = {t.host for t in logs if t.state == "DONE"}
    running = {t.host for t in logs if t.state == "RUNNING"}
    errors = sum(t.errors for t in logs)
    share = "ALL" if len(done) == len(hosts) else f"{len(done)} of {len(hosts)}"
    return {
        "period_beginning": str(begin),
        "period_ending": str(end),
        "num_hosts": len(hosts),
        "num_hosts_done": len(done),
        "num_hosts_running": len(running),
        "num_hosts_not_run": len(hosts - seen),
        "hosts_not_run": sorted(hosts - seen),
        "total_instances": sum(t.task_items for t in logs),
        "total_errors": errors,
        "overall_status": f"{share} hosts done. {errors} errors.",
        "log": {
            t.host: {
                "state": t.state,
                "instances": t.task_items,
                "errors": t.errors,
                "message": t.message,
            }
            for t in logs
        },
    }
