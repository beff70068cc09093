"""changePassword and trigger_crash_dump (Nova's compute API ``set_admin_password`` and
``trigger_crash_dump``): requests the guest acts on.

changePassword: lock (409), state ACTIVE with no task (409), task ``updating_password`` and the
``changePassword`` action, then a *call* to the compute host: the answer waits for the guest,
and the host's refusals arrive as Nova's (409, or 501 for a driver without the feature).
trigger_crash_dump (2.17): lock (409), a host (409 "not ready"), state (409), the
``trigger_crash_dump`` action, then a cast; the state is not changed.
Called by openkeel.api.resources.admin_password and the servers resource.
"""

from __future__ import annotations

from openkeel.api.usecases.console_output import InstanceNotReady
from openkeel.api.usecases.sending import undone_if_unsent
from openkeel.api.usecases.server_actions import ServerActions
from openkeel.api.usecases.servers.create import call_context
from openkeel.api.usecases.servers.lookup import FoundServer
from openkeel.db.repositories import instances
from openkeel.domain.instances import InstanceUpdate
from openkeel.domain.states import TaskState
from openkeel.rpc.clients.compute import instance_host
from openkeel.rpc.messages.compute import SetAdminPassword, TriggerCrashDump


class GuestRequests(ServerActions):
    """changePassword and trigger_crash_dump for one caller."""

    def change_password(self, found: FoundServer, password: str) -> None:
        inst = found.instance
        self._check_lock(inst)
        self._gate("set_admin_password", inst)
        task = TaskState.UPDATING_PASSWORD.value
        with self._cell(found, "changePassword").begin() as conn:
            updated = instances.update(
                conn, inst.uuid, InstanceUpdate(task_state=task), expected_task_state=[None]
            )
            self._start_action(conn, inst.uuid, "changePassword")
        self._saved(inst, updated)
        compute = self._compute()
        if compute is not None:
            db = self._cell(found, "changePassword")
            with undone_if_unsent(db, inst.uuid, "changePassword", task):
                message = SetAdminPassword(inst.uuid, new_pass=password)
                compute.call(call_context(self._context), instance_host(updated), message)

    def trigger_crash_dump(self, found: FoundServer) -> None:
        inst = found.instance
        self._check_lock(inst)
        if not inst.host:
            raise InstanceNotReady(inst.uuid)
        self._gate("trigger_crash_dump", inst)
        with self._cell(found, "trigger_crash_dump").begin() as conn:
            self._start_action(conn, inst.uuid, "trigger_crash_dump")
        compute = self._compute()
        if compute is not None:
            compute.cast(call_context(self._context), inst.host, TriggerCrashDump(inst.uuid))


__all__ = ["GuestRequests"]
