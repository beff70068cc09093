"""The periodic task ``instance_usage_audit`` (Nova's ``_instance_usage_audit``): once per
completed audit period (``[DEFAULT] instance_usage_audit_period``) and host, count the
instances that were active on the host during the period and record the run in ``task_log``
(RUNNING, then DONE with its error count), which GET /os-instance_usage_audit_log reports.

Registered by ComputeService; a no-op unless ``[DEFAULT] instance_usage_audit``. As Nova, one
``instance.exists`` notification per instance (decisions 0053, 0060); one that cannot be read
counts as an error of the run.
"""

from __future__ import annotations

import logging
import time
from datetime import datetime

from openkeel.compute.host import ComputeHost
from openkeel.db.repositories import instances, task_log
from openkeel.domain.audit_periods import last_completed_audit_period
from openkeel.notifications.instance_payloads import Initiator

LOG = logging.getLogger(__name__)

TASK = "instance_usage_audit"


def instance_usage_audit(host: ComputeHost) -> bool:
    """Audit the last completed period once; True when this call ran it."""
    if not host.conf.instance_usage_audit:
        return False
    begin, end = last_completed_audit_period(host.conf.instance_usage_audit_period, host.clock.now())  # fmt: skip
    engine = host.records.db
    with engine.connect() as conn:
        if task_log.for_period(conn, TASK, begin, end, host.host):
            return False
        active = instances.active_in_window(conn, begin, end, host=host.host)
    LOG.info("Running instance usage audit for host %s from %s to %s. %s instances.",
             host.host, begin, end, len(active))  # fmt: skip
    started = time.monotonic()
    with engine.begin() as conn:
        claimed = task_log.begin_task(
            conn, TASK, begin, end, host.host, len(active), "Instance usage audit started..."
        )
    if not claimed:
        return False
    errors = _notify_exists(host, [uuid for _, uuid in active], (begin, end))
    message = (
        f"Instance usage audit ran for host {host.host}, {len(active)} instances in "
        f"{time.monotonic() - started} seconds."
    )
    with engine.begin() as conn:
        task_log.end_task(conn, TASK, begin, end, host.host, errors, message)
    return True


def _notify_exists(host: ComputeHost, uuids: list[str], period: tuple[datetime, datetime]) -> int:
    """instance.exists for each audited instance; the number that failed."""
    notifier = host.notifier
    if not notifier.enabled:
        return 0
    errors = 0
    for uuid in uuids:
        try:
            instance = host.records.get(uuid, read_deleted="yes")
            notifier.instance_exists(instance, Initiator(), period)
        except Exception:
            LOG.exception("Failed to generate usage audit for instance %s", uuid)
            errors += 1
    return errors
