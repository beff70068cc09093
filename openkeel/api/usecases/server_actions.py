"""The simple server actions: pause/unpause, suspend/resume, lock/unlock, os-resetState and
injectNetworkInfo, with Nova's lock, state-gate and instance-action rules.

Called by the handlers of the pause_server, suspend_server, lock_server and admin_actions
resources after they found the server and checked the main policy rule. Transitions set the
task state (compare-and-swap on an idle task), record the instance action under the request id
and cast to the compute host; lock, unlock and resetState are API-only writes.
"""

from __future__ import annotations

from typing import Any

from openkeel.api.context import RequestContext
from openkeel.api.services import ApiServices
from openkeel.api.usecases.instance_saves import notify_saved
from openkeel.api.usecases.sending import undone_if_unsent
from openkeel.api.usecases.servers.create import call_context
from openkeel.api.usecases.servers.lifecycle import InstanceIsLocked
from openkeel.api.usecases.servers.lookup import FoundServer, find_server
from openkeel.db.repositories import instance_actions, instances
from openkeel.domain.instances import Instance, InstanceUpdate
from openkeel.domain.states import (
    InstanceInvalidState,
    TaskState,
    VmState,
    ensure_action_allowed,
)
from openkeel.notifications.instance_payloads import Initiator
from openkeel.rpc.clients.compute import instance_host
from openkeel.rpc.messages.compute import (
    InjectNetworkInfo,
    InstanceMessage,
    PauseInstance,
    ResumeInstance,
    SuspendInstance,
    UnpauseInstance,
)

LOCKED_REASON = "locked_reason"
# os-resetState body values -> vm_state.
RESET_STATES = {"active": VmState.ACTIVE.value, "error": VmState.ERROR.value}

# operation -> (task state while in flight, instance action, ComputeRpcClient method)
TRANSITIONS: dict[str, tuple[TaskState, str, type[InstanceMessage]]] = {
    "pause": (TaskState.PAUSING, "pause", PauseInstance),
    "unpause": (TaskState.UNPAUSING, "unpause", UnpauseInstance),
    "suspend": (TaskState.SUSPENDING, "suspend", SuspendInstance),
    "resume": (TaskState.RESUMING, "resume", ResumeInstance),
}


class ServerActions:
    """The simple actions on the servers of one caller."""

    def __init__(self, services: ApiServices, context: RequestContext) -> None:
        self._services = services
        self._context = context

    def find(self, server_id: str) -> FoundServer:
        """The server (404 when not visible to the caller)."""
        return find_server(self._services, self._context, server_id)

    def authorize(self, rule: str, found: FoundServer, with_user: bool = False) -> None:
        """Policy ``rule`` on the server's project (and user when ``with_user``)."""
        target = {"project_id": found.instance.project_id}
        if with_user:
            target["user_id"] = found.instance.user_id
        self._context.can(rule, target)

    # --- helpers ---------------------------------------------------------------------------

    def _check_lock(self, inst: Instance) -> None:
        if inst.locked and not self._context.is_admin:
            raise InstanceIsLocked(inst.uuid)

    def _gate(self, operation: str, inst: Instance) -> None:
        """409 unless ``operation`` may start in the server's states (Nova's messages)."""
        ensure_action_allowed(
            operation,
            server_id=inst.uuid,
            vm_state=inst.vm_state,
            task_state=inst.task_state,
            launched=inst.launched_at is not None,
        )

    def _cell(self, found: FoundServer, action: str) -> Any:
        if found.cell_uuid is None:
            # Only a build request exists: nothing to change yet (Nova has no row either).
            inst = found.instance
            raise InstanceInvalidState(action, inst.uuid, "vm_state", inst.vm_state)
        return self._services.cell_dbs[found.cell_uuid]

    def _start_action(self, conn: Any, uuid: str, action: str) -> None:
        ctx = self._context
        instance_actions.start_action(
            conn,
            uuid,
            action,
            request_id=ctx.request_id,
            user_id=ctx.user_id,
            project_id=ctx.project_id,
        )

    def _api_event(self, conn: Any, uuid: str, event: str) -> None:
        """An ``api_<action>`` event that starts and succeeds at once (Nova's API events)."""
        rid = self._context.request_id
        instance_actions.start_event(conn, uuid, rid, event)
        instance_actions.finish_event(conn, uuid, rid, event, result="Success")

    def _compute(self) -> Any:
        return getattr(self._services, "compute", None)

    # --- pause / unpause / suspend / resume ------------------------------------------------

    def transition(self, found: FoundServer, operation: str) -> None:
        """pause, unpause, suspend or resume: gate, task state, action, cast to compute."""
        task, action, message = TRANSITIONS[operation]
        inst = found.instance
        self._check_lock(inst)
        self._gate(operation, inst)
        with self._cell(found, operation).begin() as conn:
            updated = instances.update(
                conn, inst.uuid, InstanceUpdate(task_state=task.value), expected_task_state=[None]
            )
            self._start_action(conn, inst.uuid, action)
        self._saved(inst, updated)
        compute = self._compute()
        if compute is not None:
            db = self._cell(found, operation)
            with undone_if_unsent(db, inst.uuid, operation, task.value):
                compute.cast(
                    call_context(self._context), instance_host(updated), message(inst.uuid)
                )

    # --- lock / unlock ---------------------------------------------------------------------

    def is_expected_locked_by(self, found: FoundServer) -> bool:
        """False when the lock was set by the other party (owner vs admin) than the caller."""
        inst = found.instance
        expected = "owner" if inst.project_id == self._context.project_id else "admin"
        return not inst.locked_by or inst.locked_by == expected

    def lock(self, found: FoundServer, reason: str | None) -> None:
        """Lock the server; the owner re-locking a locked server changes nothing."""
        inst = found.instance
        is_owner = inst.project_id == self._context.project_id
        if inst.locked and is_owner:
            return
        sysmeta = dict(inst.system_metadata)
        if reason:
            sysmeta[LOCKED_REASON] = reason
        changes = InstanceUpdate(
            locked=True, locked_by="owner" if is_owner else "admin", system_metadata=sysmeta
        )
        with self._cell(found, "lock").begin() as conn:
            self._start_action(conn, inst.uuid, "lock")
            locked = instances.update(conn, inst.uuid, changes)
            self._api_event(conn, inst.uuid, "api_lock")
        self._saved(inst, locked)
        self._notify(locked, "lock")

    def unlock(self, found: FoundServer) -> None:
        """Unlock the server and forget its lock reason."""
        inst = found.instance
        sysmeta = {k: v for k, v in inst.system_metadata.items() if k != LOCKED_REASON}
        changes = InstanceUpdate(locked=False, locked_by=None, system_metadata=sysmeta)
        with self._cell(found, "unlock").begin() as conn:
            self._start_action(conn, inst.uuid, "unlock")
            unlocked = instances.update(conn, inst.uuid, changes)
            self._api_event(conn, inst.uuid, "api_unlock")
        self._saved(inst, unlocked)
        self._notify(unlocked, "unlock")

    def _saved(self, before: Instance, after: Instance) -> None:
        """``instance.update`` of a save this request made (Nova's ``Instance.save``)."""
        notify_saved(self._services, self._context, before, after)

    def _notify(self, instance: Instance, action: str) -> None:
        """``instance.lock`` / ``instance.unlock`` (versioned only, as Nova's API)."""
        ctx = self._context
        who = Initiator(ctx.request_id, ctx.user_id, ctx.project_id)
        self._services.notifier.instance_action(instance, action, None, who, legacy_too=False)

    # --- admin actions ---------------------------------------------------------------------

    def reset_state(self, found: FoundServer, state: str) -> None:
        """os-resetState: vm_state active or error, no task (recorded as ``resetState``)."""
        uuid = found.instance.uuid
        changes = InstanceUpdate(vm_state=RESET_STATES[state], task_state=None)
        with self._cell(found, "os-resetState").begin() as conn:
            self._start_action(conn, uuid, "resetState")
            reset = instances.update(conn, uuid, changes)
            instance_actions.finish_action(conn, uuid, self._context.request_id)
        self._saved(found.instance, reset)

    def inject_network_info(self, found: FoundServer) -> None:
        """injectNetworkInfo: cast to the server's host (nothing to do without one)."""
        inst = found.instance
        self._check_lock(inst)
        compute = self._compute()
        if compute is not None and inst.host and found.cell_uuid is not None:
            compute.cast(call_context(self._context), inst.host, InjectNetworkInfo(inst.uuid))
