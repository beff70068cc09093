"""Live migration of a server (API tier): os-migrateLive, abort, force_complete, in-progress list.

Nova's compute API checks (lock, vm/task state gates, target host exists), then task state
``migrating``, the ``live-migration`` instance action and a cast of conductor
``live_migrate_instance``; abort and force_complete check the migration's status and cast to
the source compute. Called by openkeel.api.resources.migrate_server and server_migrations.
"""

from __future__ import annotations

from typing import Any

from openkeel.api.context import RequestContext
from openkeel.api.services import ApiServices
from openkeel.api.usecases.instance_saves import notify_saved
from openkeel.api.usecases.sending import undone_if_unsent
from openkeel.api.usecases.servers.create import call_context
from openkeel.api.usecases.servers.lifecycle import InstanceIsLocked
from openkeel.api.usecases.servers.lookup import FoundServer
from openkeel.db.repositories import (
    compute_nodes,
    instance_actions,
    instances,
    migrations,
    request_specs,
)
from openkeel.domain import migrations as mstatus
from openkeel.domain.errors import Invalid, NotFound
from openkeel.domain.instances import Instance, InstanceUpdate, RequestSpecNotFound
from openkeel.domain.migrations import (
    InvalidMigrationState,
    Migration,
    MigrationNotFound,
    MigrationNotFoundForInstance,
)
from openkeel.domain.states import TaskState, ensure_action_allowed
from openkeel.rpc.clients.compute import instance_host
from openkeel.rpc.messages.compute import LiveMigrationAbort, LiveMigrationForceComplete
from openkeel.rpc.messages.conductor import LiveMigrateInstance

ABORTABLE = (mstatus.RUNNING,)
QUEUED = (mstatus.QUEUED, mstatus.PREPARING)


class ComputeHostNotFound(Invalid):
    def __init__(self, host: str) -> None:
        super().__init__(f"Compute host {host} could not be found.")


class LiveMigrator:
    """os-migrateLive and the server migrations sub-resource for one caller."""

    def __init__(self, services: ApiServices, context: RequestContext) -> None:
        self._services = services
        self._context = context

    def live_migrate(
        self,
        found: FoundServer,
        host: str | None,
        block_migration: bool | None,
        disk_over_commit: bool | None,
        force: bool | None,
    ) -> None:
        """Start the live migration (202); ``force`` False sends ``host`` through the scheduler."""
        inst = self._checked(found, "live_migrate")
        node = self._node_of(found, host) if host else None
        spec = self._spec(inst)
        if force is False and host:
            spec["requested_destination"] = {"host": host, "node": node}
            host = None
        updated = self._save(found, InstanceUpdate(task_state=TaskState.MIGRATING.value),
                             "live-migration", expected=[None])  # fmt: skip
        conductor = getattr(self._services, "conductor", None)
        if conductor is not None:
            task = TaskState.MIGRATING.value
            with undone_if_unsent(self._cell(found), inst.uuid, "live migration", task):
                message = LiveMigrateInstance(
                    updated.uuid, {"host": host}, block_migration=block_migration,
                    request_spec=spec,
                )  # fmt: skip
                conductor.cast(call_context(self._context), message)

    def abort(self, found: FoundServer, migration_id: str, queued_too: bool) -> None:
        """DELETE /servers/{id}/migrations/{migration_id} (202)."""
        self._checked(found, "live_migrate_abort")
        migration = self.migration(found, migration_id)
        allowed = ABORTABLE + (QUEUED if queued_too else ())
        if migration.status not in allowed:
            raise InvalidMigrationState(
                migration.id, found.instance.uuid, migration.status, "abort live migration"
            )
        self._record(found, "live_migration_cancel")
        compute = getattr(self._services, "compute", None)
        if compute is not None:
            abort = LiveMigrationAbort(found.instance.uuid, migration.id)
            compute.cast(call_context(self._context), instance_host(found.instance), abort)

    def force_complete(self, found: FoundServer, migration_id: str) -> None:
        """force_complete action (202); 400 unless the migration is running."""
        self._checked(found, "live_migrate_force_complete")
        try:
            migration = self.migration(found, migration_id)
        except MigrationNotFoundForInstance as exc:
            raise Invalid(exc.message) from None
        if migration.status != mstatus.RUNNING:
            raise InvalidMigrationState(
                migration.id, found.instance.uuid, migration.status, "force complete"
            )
        self._record(found, "live_migration_force_complete")
        compute = getattr(self._services, "compute", None)
        if compute is not None:
            source = migration.source_compute or instance_host(found.instance)
            force = LiveMigrationForceComplete(found.instance.uuid)
            compute.cast(call_context(self._context), source, force)

    def in_progress(self, found: FoundServer) -> list[Migration]:
        """The server's live migrations that have not ended yet."""
        if found.cell_uuid is None:
            return []
        with self._cell(found).connect() as conn:
            items = migrations.list_migrations(
                conn, instance_uuid=found.instance.uuid, migration_types=[mstatus.LIVE_MIGRATION]
            )
        ended = {mstatus.COMPLETED, mstatus.CANCELLED, mstatus.ERROR, mstatus.FAILED, "done"}
        return [m for m in items if m.status not in ended]

    def migration(self, found: FoundServer, migration_id: str) -> Migration:
        """The server's migration ``migration_id`` (MigrationNotFoundForInstance, 404)."""
        missing = MigrationNotFoundForInstance(migration_id, found.instance.uuid)
        row_id = _row_id(migration_id)
        if found.cell_uuid is None or row_id is None:
            raise missing
        with self._cell(found).connect() as conn:
            try:
                migration = migrations.get(conn, row_id)
            except MigrationNotFound:
                raise missing from None
        if migration.instance_uuid != found.instance.uuid:
            raise missing
        return migration

    # --- shared ------------------------------------------------------------------------------

    def _checked(self, found: FoundServer, gate: str) -> Instance:
        inst = found.instance
        if inst.locked and not self._context.is_admin:
            raise InstanceIsLocked(inst.uuid)
        ensure_action_allowed(
            gate, server_id=inst.uuid, vm_state=inst.vm_state, task_state=inst.task_state,
            launched=inst.launched_at is not None,
        )  # fmt: skip
        return inst

    def _node_of(self, found: FoundServer, host: str) -> str | None:
        with self._cell(found).connect() as conn:
            nodes = compute_nodes.nodes_of_host(conn, host)
        if not nodes:
            raise ComputeHostNotFound(host)
        return nodes[0].hypervisor_hostname

    def _spec(self, inst: Instance) -> dict[str, Any]:
        with self._services.api_db.connect() as conn:
            try:
                return request_specs.get(conn, inst.uuid).to_primitive()
            except RequestSpecNotFound:
                return {"instance_uuid": inst.uuid, "flavor": inst.flavor.to_primitive()}

    def _cell(self, found: FoundServer) -> Any:
        if found.cell_uuid is None:
            raise NotFound(f"Instance {found.instance.uuid} could not be found.")
        return self._services.cell_dbs[found.cell_uuid]

    def _save(
        self, found: FoundServer, changes: InstanceUpdate, action: str, expected: list[Any]
    ) -> Instance:
        with self._cell(found).begin() as conn:
            updated = instances.update(
                conn, found.instance.uuid, changes, expected_task_state=expected
            )
            self._start_action(conn, updated.uuid, action)
        notify_saved(self._services, self._context, found.instance, updated)
        return updated

    def _record(self, found: FoundServer, action: str) -> None:
        with self._cell(found).begin() as conn:
            self._start_action(conn, found.instance.uuid, action)

    def _start_action(self, conn: Any, uuid: str, action: str) -> None:
        ctx = self._context
        instance_actions.start_action(
            conn, uuid, action, request_id=ctx.request_id, user_id=ctx.user_id,
            project_id=ctx.project_id,
        )  # fmt: skip


def _row_id(text: str) -> int | None:
    """``text`` as a migration row id; None when no row can have it: not ASCII digits (``"²"``
    is a digit to ``str.isdigit`` but not to ``int``) or past the 64-bit range a database
    driver can bind (Nova's query then finds no row: a 404)."""
    if not (text.isascii() and text.isdigit()):
        return None
    number = int(text)
    return number if number < 2**63 else None
