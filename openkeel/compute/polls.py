"""Two of Nova's compute periodic tasks that act on servers left waiting:

- ``poll_unconfirmed_resizes`` (Nova's ``_poll_unconfirmed_resizes``, gated by
  ``resize_confirm_window`` > 0): a resize or cold migration finished on this host and left
  unconfirmed longer than the window is confirmed as the API would (migration ``confirming``,
  a ``confirmResize`` action, the cast to the source host); one whose server is gone, in
  ERROR, or not idle in ``resized`` gets its migration set to ``error``, as Nova does.
- ``heal_instance_info_cache`` (``heal_instance_info_cache_interval`` > 0): one server of this
  host per run, round robin, has its network info read again from the network service.

Registered by ComputeService; both return what they did, for the tests.
"""

from __future__ import annotations

import datetime
import logging
import threading
import uuid as uuidlib

from openkeel.compute.host import ComputeHost
from openkeel.compute.operations.resize import compute_client
from openkeel.db.repositories import migrations
from openkeel.domain import migrations as mstatus
from openkeel.domain.instances import InstanceNotFound, InstanceUpdate
from openkeel.domain.states import TaskState, VmState
from openkeel.rpc.message import CallContext
from openkeel.rpc.messages.compute import ConfirmResize

LOG = logging.getLogger(__name__)


def poll_unconfirmed_resizes(host: ComputeHost) -> list[str]:
    """Confirm this host's resizes older than ``resize_confirm_window``; the uuids confirmed."""
    window = int(host.conf.resize_confirm_window)
    if window <= 0:
        return []
    cutoff = host.clock.now() - datetime.timedelta(seconds=window)
    with host.records.db.connect() as conn:
        waiting = migrations.list_migrations(conn, statuses=[mstatus.FINISHED], host=host.host)
    confirmed = []
    for migration in waiting:
        if migration.dest_compute != host.host or (migration.updated_at or cutoff) > cutoff:
            continue
        uuid = migration.instance_uuid
        try:
            instance = host.records.get(uuid)
        except InstanceNotFound:
            _set_error(host, migration.id, f"instance {uuid} is gone")
            continue
        if instance.vm_state != VmState.RESIZED.value or instance.task_state is not None:
            state = f"{instance.vm_state}/{instance.task_state}"
            _set_error(host, migration.id, f"in states {state}, not resized/None")
            continue
        context = CallContext(roles=("admin",), request_id=f"req-{uuidlib.uuid4()}")
        with host.records.db.begin() as conn:
            marked = migrations.update(conn, migration.id, status=mstatus.CONFIRMING)
        host.records.ensure_action(uuid, "confirmResize", context.request_id, None, None)
        LOG.info("Automatically confirming the resize of %s (unconfirmed for more than %s s)", uuid, window)  # fmt: skip
        compute_client(host).cast(context, migration.source_compute or host.host, ConfirmResize(uuid, marked.to_primitive()))  # fmt: skip
        confirmed.append(uuid)
    return confirmed


def _set_error(host: ComputeHost, migration_id: int, why: str) -> None:
    LOG.info("Setting migration %s to error: %s", migration_id, why)
    with host.records.db.begin() as conn:
        migrations.update(conn, migration_id, status=mstatus.ERROR)


class InfoCacheHealer:
    """Round robin over this host's servers, one per call (Nova keeps the same list)."""

    def __init__(self, host: ComputeHost) -> None:
        self.host = host
        self._queue: list[str] = []
        self._lock = threading.Lock()

    def __call__(self) -> str | None:
        """Refresh one server's network info; its uuid, or None when there was none."""
        if int(self.host.conf.heal_instance_info_cache_interval) <= 0:
            return None
        while True:
            uuid = self._next()
            if uuid is None:
                return None
            try:
                if self._heal(uuid):
                    return uuid
            except InstanceNotFound:
                continue

    def _next(self) -> str | None:
        with self._lock:
            if not self._queue:
                self._queue = [i.uuid for i in self.host.records.on_host(self.host.host)]
            return self._queue.pop(0) if self._queue else None

    def _heal(self, uuid: str) -> bool:
        host = self.host
        with host.locks.try_hold(uuid) as held:
            if not held:
                return False  # an operation is at work on it: the next server instead
            instance = host.records.get(uuid)
            if instance.host != host.host or instance.vm_state == VmState.BUILDING.value or instance.task_state == TaskState.DELETING.value:  # fmt: skip
                return False
            info = host.network.get_instance_nw_info(host.net_ref(uuid, instance.project_id))
            host.records.update(uuid, InstanceUpdate(network_info=info))
            LOG.debug("Updated the network info cache of %s", uuid)
            return True
