"""migrate_server (cold): resize or cold-migrate one instance, Nova's MigrationTask made robust.

``MigrateTask.execute()``: record the migration (status ``pre-migrating``) in the instance's
cell; move the instance's Placement allocation on the source to the migration's uuid (so the
scheduler can claim the new flavor for the instance on the destination while the source keeps
its resources until confirm/revert); ask the scheduler for a destination (the request spec
carries the new flavor, ``ignore_hosts`` and any requested host); cast ``prep_resize`` to the
destination compute. Any failure rolls back: the allocations move back to the instance, the
migration goes to ``error``, the instance keeps its vm_state with no task state and gets a fault
(NoValidHost: "No valid host was found. ..."), and the ``conductor_migrate_server`` event of
the action records the error. Called by ``ComputeTaskEndpoint.migrate_server``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from openkeel.conductor.context import ConductorDeps
from openkeel.conductor.selections import SelectedHost
from openkeel.conductor.tasks.recorded import notify_task_error, roll_back_move, run_recorded
from openkeel.db.records import InstanceRecords
from openkeel.db.repositories import migrations
from openkeel.domain import migrations as status
from openkeel.domain.instances import FlavorSnapshot, Instance
from openkeel.domain.migrations import Migration
from openkeel.rpc.message import CallContext
from openkeel.rpc.messages.compute import PrepResize
from openkeel.rpc.messages.scheduler import SelectDestinations

LOG = logging.getLogger(__name__)

EVENT = "conductor_migrate_server"
MIGRATION_CONSUMER = "MIGRATION"


class MigrateTask:
    """One resize / cold migration request."""

    def __init__(
        self,
        deps: ConductorDeps,
        context: CallContext,
        instance_uuid: str,
        flavor: Mapping[str, Any] | None,
        scheduler_hint: Mapping[str, Any] | None,
        request_spec: Mapping[str, Any] | None,
        clean_shutdown: bool = True,
    ) -> None:
        self.deps = deps
        self.context = context
        self.uuid = instance_uuid
        self.flavor = FlavorSnapshot.from_primitive(flavor) if flavor else None
        self.filter_properties = dict((scheduler_hint or {}).get("filter_properties") or {})
        self.request_spec = dict(request_spec or {})
        self.clean_shutdown = clean_shutdown
        self.migration: Migration | None = None
        self.moved = False

    def execute(self) -> None:
        run_recorded(self.deps, self.context, self.uuid, EVENT, self._migrate, self.rollback)

    def _migrate(self, records: InstanceRecords) -> None:
        instance = records.get(self.uuid)
        new_flavor = self.flavor or instance.flavor
        self.migration = self._record(records, instance, new_flavor)
        self.moved = self.deps.placement.move_allocations(
            self.uuid, self.migration.uuid, target_consumer_type=MIGRATION_CONSUMER
        )
        spec = self._spec(instance, new_flavor)
        answer = self.deps.scheduler.select_destinations(
            self.context,
            SelectDestinations(spec, (self.uuid,), return_objects=True, return_alternates=True),
        )
        chosen = SelectedHost.from_primitive(_first(answer)[0])
        spec = chosen.fill_provider_mapping(spec)
        to_destination = PrepResize(
            self.uuid, new_flavor.to_primitive(), self.migration.to_primitive(), chosen.node,
            image=spec.get("image") or {}, request_spec=spec, clean_shutdown=self.clean_shutdown,
        )  # fmt: skip
        self.deps.compute.cast(self.context, chosen.host, to_destination)

    def _record(
        self, records: InstanceRecords, instance: Instance, new_flavor: FlavorSnapshot
    ) -> Migration:
        same = (new_flavor.id, new_flavor.flavorid) == (
            instance.flavor.id,
            instance.flavor.flavorid,
        )
        with records.db.begin() as conn:
            return migrations.create(
                conn,
                instance_uuid=self.uuid,
                migration_type="migration" if same else "resize",
                status=status.PRE_MIGRATING,
                source_compute=instance.host,
                source_node=instance.node,
                old_instance_type_id=instance.flavor.id,
                new_instance_type_id=new_flavor.id,
                user_id=self.context.user_id,
                project_id=self.context.project_id,
            )

    def _spec(self, instance: Instance, new_flavor: FlavorSnapshot) -> dict[str, Any]:
        spec = dict(self.request_spec)
        ignore = list(spec.get("ignore_hosts") or self.filter_properties.get("ignore_hosts") or [])
        spec.update(
            flavor=new_flavor.to_primitive(),
            instance_uuid=self.uuid,
            num_instances=1,
            project_id=instance.project_id,
            user_id=instance.user_id,
            ignore_hosts=ignore,
            force_hosts=[],
            force_nodes=[],
            retry=None,
        )
        return spec

    def rollback(self, records: InstanceRecords, exc: BaseException) -> None:
        """Allocations back to the instance, migration ``error``, task state cleared, fault,
        and ``compute_task.migrate_server.error`` (the server keeps its vm_state, as Nova)."""
        roll_back_move(self.deps, records, self.uuid, self.migration, self.moved, exc)
        notify_task_error(self.deps, self.context, records, self.uuid, "migrate_server",
                          self.request_spec, exc)  # fmt: skip


def _first(answer: Any) -> list[Mapping[str, Any]]:
    assert isinstance(answer, list) and answer, answer
    return list(answer[0])
