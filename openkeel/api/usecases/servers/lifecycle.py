"""Server lifecycle use cases: delete (while booting, locally, softly or through compute),
forceDelete, restore, start, stop and reboot; Nova's lock, state-gate and quota rules.

Called by the servers update/delete and action handlers after ``find_server``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa

from openkeel.api.context import RequestContext
from openkeel.api.services import ApiServices
from openkeel.api.usecases.instance_saves import notify_saved
from openkeel.api.usecases.quotas import QuotaEngine
from openkeel.api.usecases.sending import undone_if_unsent
from openkeel.api.usecases.servers.create import call_context, withdraw_build_requests
from openkeel.api.usecases.servers.create_quota import claim_instances
from openkeel.api.usecases.servers.create_volumes import release_requested
from openkeel.api.usecases.servers.lookup import FoundServer, find_server
from openkeel.clients.placement_errors import PlacementError
from openkeel.db.repositories import (
    instance_actions,
    instance_mappings,
    instances,
    server_extras,
)
from openkeel.domain.errors import Conflict
from openkeel.domain.flavors import Flavor
from openkeel.domain.instances import (
    Instance,
    InstanceUpdate,
)
from openkeel.domain.states import TaskState, VmState, ensure_action_allowed
from openkeel.network.adapter import InstanceNetRef
from openkeel.network.factory import get_network_adapter
from openkeel.notifications.instance_payloads import Initiator
from openkeel.rpc.clients.compute import instance_host
from openkeel.rpc.messages.compute import (
    RebootInstance,
    RestoreInstance,
    SoftDeleteInstance,
    StartInstance,
    StopInstance,
    TerminateInstance,
)
from openkeel.volume.adapter import VolumeContext
from openkeel.volume.factory import get_volume_adapter
from openkeel.volume.release import release_volumes

LOG = logging.getLogger(__name__)

POLICY = "os_compute_api:servers:%s"


class InstanceIsLocked(Conflict):
    """Nova's InstanceIsLocked (409)."""

    def __init__(self, uuid: str) -> None:
        super().__init__(f"Instance {uuid} is locked")


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


class ServerLifecycle:
    """Lifecycle operations on the servers of one caller."""

    def __init__(self, services: ApiServices, context: RequestContext) -> None:
        self._services = services
        self._context = context
        self._conf = services.conf

    # --- shared ----------------------------------------------------------------------------

    def find(self, server_id: str) -> FoundServer:
        """The server (404 when not visible)."""
        return find_server(self._services, self._context, server_id)

    def authorize(self, action: str, found: FoundServer, with_user: bool = True) -> None:
        """Policy ``os_compute_api:servers:<action>`` on the server's project (and user)."""
        inst = found.instance
        target = {"project_id": inst.project_id}
        if with_user:
            target["user_id"] = inst.user_id
        self._context.can(POLICY % action, target)

    def _check_lock(self, inst: Instance) -> None:
        if inst.locked and not self._context.is_admin:
            raise InstanceIsLocked(inst.uuid)

    def _gate(self, operation: str, inst: Instance, api_action: str | None = None) -> None:
        ensure_action_allowed(
            operation,
            server_id=inst.uuid,
            vm_state=inst.vm_state,
            task_state=inst.task_state,
            launched=inst.launched_at is not None,
            api_action=api_action,
        )

    def _cell(self, found: FoundServer) -> sa.Engine:
        return self._services.cell_dbs[found.cell_uuid or ""]

    def _update(
        self,
        found: FoundServer,
        changes: InstanceUpdate,
        expected: Any = ...,
        action: str | None = None,
    ) -> Instance:
        """Save ``changes`` (compare-and-swap on ``expected``); with ``action``, record the
        user's instance action in the same transaction, as Nova does before casting."""
        with self._cell(found).begin() as conn:
            if expected is ...:
                updated = instances.update(conn, found.instance.uuid, changes)
            else:
                updated = instances.update(
                    conn, found.instance.uuid, changes, expected_task_state=expected
                )
            if action is not None:
                instance_actions.start_action(
                    conn,
                    found.instance.uuid,
                    action,
                    request_id=self._context.request_id,
                    user_id=self._context.user_id,
                    project_id=self._context.project_id,
                )
        notify_saved(self._services, self._context, found.instance, updated)
        return updated

    def _compute(self) -> Any:
        return getattr(self._services, "compute", None)

    def _host_up(self, found: FoundServer) -> bool:
        inst = found.instance
        if not inst.host:
            return False
        with self._cell(found).connect() as conn:
            row = server_extras.compute_services_by_host(conn, [inst.host]).get(inst.host)
        if row is None or row["forced_down"]:
            return False
        heartbeat = row["last_seen_up"] or row["updated_at"] or row["created_at"]
        if heartbeat is None:
            return False
        elapsed = abs((_now() - heartbeat).total_seconds())
        return bool(elapsed <= int(self._conf.service_down_time))

    # --- delete ----------------------------------------------------------------------------

    def delete(self, found: FoundServer) -> None:
        """DELETE /servers/{id}: soft when ``reclaim_instance_interval`` allows, else hard."""
        inst = found.instance
        self._check_lock(inst)
        soft = int(self._conf.reclaim_instance_interval) > 0 and found.cell_uuid is not None
        # Nova cannot soft-delete a server that never ran: it falls back to a hard delete.
        if soft and inst.launched_at is not None and inst.vm_state != VmState.SOFT_DELETED:
            self._soft_delete(found)
            return
        self._hard_delete(found, "delete")

    def force_delete(self, found: FoundServer) -> None:
        """forceDelete: a hard delete even when soft deletion is configured."""
        self._check_lock(found.instance)
        self._hard_delete(found, "force_delete")

    def _hard_delete(self, found: FoundServer, operation: str) -> None:
        self._gate(operation, found.instance)
        if found.cell_uuid is None:
            if self._delete_build_request(found.instance):
                return
            found = self.find(found.instance.uuid)  # conductor placed it meanwhile
        inst = found.instance
        compute = self._compute()
        if not inst.host or compute is None or not self._host_up(found):
            self._local_delete(found)
            return
        updated = self._update(
            found, InstanceUpdate(task_state=TaskState.DELETING.value, progress=0), action="delete"
        )
        deleting = TaskState.DELETING.value
        with undone_if_unsent(self._cell(found), inst.uuid, "delete", deleting):
            terminate = TerminateInstance(updated.uuid)
            compute.cast(call_context(self._context), instance_host(updated), terminate)

    def _delete_build_request(self, inst: Instance) -> bool:
        """Drop a not-yet-scheduled build; False when conductor already took it."""
        volumes = get_volume_adapter(self._services.conf, self._services.api_db)
        as_service = VolumeContext(self._context.project_id, self._context.user_id, True)

        def release(mappings: Sequence[Mapping[str, Any]]) -> None:
            release_requested(volumes, as_service, mappings)

        return bool(withdraw_build_requests(self._services.api_db, [inst.uuid], release))

    def _local_delete(self, found: FoundServer) -> None:
        """Delete a server no compute host holds (never scheduled, or its host is down)."""
        uuid = found.instance.uuid
        # The mapping first (as Nova's API does): a process killed between the two
        # transactions leaves a server the user still sees and deletes again, never a deleted
        # one whose mapping still counts (server group members, down-cell listings).
        with self._services.api_db.begin() as api:
            instance_mappings.set_queued_for_delete(api, uuid)
        # As Nova's _local_cleanup_bdm_volumes, before the row (its soft delete takes the
        # mappings with it); acting as the service, as the host would.
        volumes = get_volume_adapter(self._services.conf, self._services.api_db)
        as_service = VolumeContext(self._context.project_id, self._context.user_id, True)
        release_volumes(self._cell(found), volumes, as_service, uuid)
        notifier = self._services.notifier.prepare("nova-api", self._services.notifier.host)
        who = Initiator(self._context.request_id, self._context.user_id, self._context.project_id)
        notifier.instance_action(found.instance, "delete", "start", who)
        with self._cell(found).begin() as conn:
            deleted = instances.update(
                conn,
                uuid,
                InstanceUpdate(
                    vm_state=VmState.DELETED.value, task_state=None, terminated_at=_now()
                ),
            )
            instances.soft_delete(conn, uuid)
        notify_saved(self._services, self._context, found.instance, deleted)
        notifier.instance_action(deleted, "delete", "end", who)
        self._free_allocations(uuid)
        self._free_ports(found.instance)

    def _free_ports(self, inst: Instance) -> None:
        """Nova's API gives back the ports of a server it deletes locally (a shelved-offloaded
        one keeps them, unbound); a failure is logged, as Nova does."""
        try:
            network = get_network_adapter(self._services.conf, self._services.api_db)
            network.deallocate_for_instance(InstanceNetRef(inst.uuid, inst.project_id))
        except Exception:
            LOG.exception("Could not release the ports of locally deleted server %s", inst.uuid)

    def _free_allocations(self, uuid: str) -> None:
        """Nova's API deletes the allocations of a server it deletes locally; a failure is
        left to the host's orphan-allocation audit."""
        placement = self._services.placement
        if placement is None:
            return
        try:
            placement.delete_allocations(uuid)
        except PlacementError:
            LOG.exception("Could not delete the allocations of locally deleted server %s", uuid)

    def _queued_for_delete(self, uuid: str, queued: bool) -> None:
        """As Nova's soft delete and restore: a soft-deleted server's mapping is queued for
        deletion (not a server group member, not listed from a down cell) until restored."""
        with self._services.api_db.begin() as api:
            instance_mappings.set_queued_for_delete(api, uuid, queued)

    def _soft_delete(self, found: FoundServer) -> None:
        self._gate("soft_delete", found.instance)
        compute = self._compute()
        if compute is not None and self._host_up(found):
            updated = self._update(
                found,
                InstanceUpdate(task_state=TaskState.SOFT_DELETING.value),
                [None],
                action="delete",
            )
            task = TaskState.SOFT_DELETING.value
            with undone_if_unsent(self._cell(found), found.instance.uuid, "delete", task):
                soft_delete = SoftDeleteInstance(updated.uuid)
                compute.cast(call_context(self._context), instance_host(updated), soft_delete)
        else:
            self._update(
                found,
                InstanceUpdate(vm_state=VmState.SOFT_DELETED.value, task_state=None, power_state=4),
            )
        self._queued_for_delete(found.instance.uuid, True)

    # --- restore ---------------------------------------------------------------------------

    def restore(self, found: FoundServer) -> None:
        """restore: back from SOFT_DELETED within the reclaim window (quota re-checked)."""
        inst = found.instance
        self._check_lock(inst)
        self._gate("restore", inst)
        engine = QuotaEngine(self._services)
        flavor = _quota_flavor(inst)
        with claim_instances(engine, self._context, flavor, 1, 1):
            compute = self._compute()
            if compute is not None and self._host_up(found):
                updated = self._update(
                    found,
                    InstanceUpdate(task_state=TaskState.RESTORING.value),
                    [None],
                    action="restore",
                )
                task = TaskState.RESTORING.value
                with undone_if_unsent(self._cell(found), inst.uuid, "restore", task):
                    restore = RestoreInstance(updated.uuid)
                    compute.cast(call_context(self._context), instance_host(updated), restore)
            else:
                # no host to power the guest on: restored at once, the action recorded as
                # Nova records it before either path
                self._update(
                    found,
                    InstanceUpdate(vm_state=VmState.ACTIVE.value, task_state=None),
                    [None],
                    action="restore",
                )
        # after the claim's API DB transaction (one writer at a time on SQLite)
        self._queued_for_delete(inst.uuid, False)

    # --- power -----------------------------------------------------------------------------

    def start(self, found: FoundServer) -> None:
        """os-start."""
        self._power(found, "start", TaskState.POWERING_ON, StartInstance)

    def stop(self, found: FoundServer) -> None:
        """os-stop."""
        self._power(found, "stop", TaskState.POWERING_OFF, StopInstance)

    def _power(
        self,
        found: FoundServer,
        operation: str,
        task: TaskState,
        message: type[StartInstance | StopInstance],
    ) -> None:
        inst = found.instance
        self._check_lock(inst)
        self._gate(operation, inst)
        updated = self._update(
            found, InstanceUpdate(task_state=task.value, progress=0), [None], action=operation
        )
        compute = self._compute()
        if compute is not None:
            with undone_if_unsent(self._cell(found), inst.uuid, operation, task.value):
                compute.cast(
                    call_context(self._context), instance_host(updated), message(updated.uuid)
                )

    def reboot(self, found: FoundServer, reboot_type: str) -> None:
        """reboot SOFT or HARD."""
        inst = found.instance
        self._check_lock(inst)
        hard = reboot_type == "HARD"
        self._gate("hard_reboot" if hard else "soft_reboot", inst)
        task = TaskState.REBOOTING_HARD if hard else TaskState.REBOOTING
        expected: list[str | None] = (
            [None, *sorted(s.value for s in (TaskState.REBOOTING, TaskState.REBOOT_PENDING,
             TaskState.REBOOT_STARTED, TaskState.RESUMING, TaskState.UNPAUSING,
             TaskState.PAUSING, TaskState.SUSPENDING, TaskState.REBOOTING_HARD))]
            if hard
            else [None]
        )  # fmt: skip
        updated = self._update(
            found, InstanceUpdate(task_state=task.value), expected, action="reboot"
        )
        compute = self._compute()
        if compute is not None:
            with undone_if_unsent(self._cell(found), inst.uuid, "reboot", task.value):
                reboot = RebootInstance(updated.uuid, reboot_type)
                compute.cast(call_context(self._context), instance_host(updated), reboot)


def _quota_flavor(inst: Instance) -> Flavor:
    snap = inst.flavor
    return Flavor(
        id=snap.id or 0,
        flavorid=snap.flavorid,
        name=snap.name,
        memory_mb=snap.memory_mb,
        vcpus=snap.vcpus,
        root_gb=snap.root_gb,
        ephemeral_gb=snap.ephemeral_gb,
        swap=snap.swap,
        rxtx_factor=snap.rxtx_factor,
        vcpu_weight=snap.vcpu_weight,
        disabled=False,
        is_public=snap.is_public,
        description=snap.description,
    )
