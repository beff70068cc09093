"""live_migrate_instance: Nova's LiveMigrationTask, made robust.

``LiveMigrateTask.execute()``: record the migration (type ``live-migration``, status
``accepted``) in the instance's cell; move the instance's source allocation to the migration's
uuid (consumer type MIGRATION); pick the destination — the scheduler (ignoring the source host,
honouring a requested destination) or, for a forced host, that host's node with its own
Placement claim of the same resources for the instance; status ``preparing``; cast compute
``live_migration`` to the source. Any failure rolls back: allocations back to the instance (the
destination claim replaced), migration ``error``, no task state, a fault, and the
``conductor_live_migrate_instance`` event in Error; the server stays where it was.
Called by ``ComputeTaskEndpoint.live_migrate_instance``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from openkeel.conductor.context import ConductorDeps
from openkeel.conductor.selections import SelectedHost
from openkeel.conductor.tasks.migrate import MIGRATION_CONSUMER
from openkeel.conductor.tasks.recorded import roll_back_move, run_recorded
from openkeel.db.engine import reader
from openkeel.db.records import InstanceRecords
from openkeel.db.repositories import compute_nodes, migrations
from openkeel.domain import migrations as status
from openkeel.domain.errors import Invalid
from openkeel.domain.instances import Instance
from openkeel.domain.migrations import Migration
from openkeel.rpc.message import CallContext
from openkeel.rpc.messages.compute import LiveMigration
from openkeel.rpc.messages.scheduler import SelectDestinations

LOG = logging.getLogger(__name__)

EVENT = "conductor_live_migrate_instance"


class ComputeHostNotFound(Invalid):
    def __init__(self, host: str) -> None:
        super().__init__(f"Compute host {host} could not be found.")


class LiveMigrateTask:
    """One live migration request."""

    def __init__(
        self,
        deps: ConductorDeps,
        context: CallContext,
        instance_uuid: str,
        scheduler_hint: Mapping[str, Any] | None,
        block_migration: bool | None,
        request_spec: Mapping[str, Any] | None,
    ) -> None:
        self.deps = deps
        self.context = context
        self.uuid = instance_uuid
        self.forced_host: str | None = (scheduler_hint or {}).get("host") or None
        self.block_migration = block_migration
        self.request_spec = dict(request_spec or {})
        self.migration: Migration | None = None
        self.moved = False

    def execute(self) -> None:
        run_recorded(self.deps, self.context, self.uuid, EVENT, self._migrate, self.rollback)

    def _migrate(self, records: InstanceRecords) -> None:
        instance = records.get(self.uuid)
        with records.db.begin() as conn:
            self.migration = migrations.create(
                conn, instance_uuid=self.uuid, migration_type=status.LIVE_MIGRATION,
                status=status.ACCEPTED, source_compute=instance.host, source_node=instance.node,
                dest_compute=self.forced_host, old_instance_type_id=instance.flavor.id,
                new_instance_type_id=instance.flavor.id, user_id=self.context.user_id,
                project_id=self.context.project_id,
            )  # fmt: skip
        self.moved = self.deps.placement.move_allocations(
            self.uuid, self.migration.uuid, target_consumer_type=MIGRATION_CONSUMER
        )
        if self.forced_host:
            dest = self._claim_forced(records, instance, self.forced_host)
        else:
            dest = self._schedule(instance)
        with records.db.begin() as conn:
            self.migration = migrations.update(
                conn, self.migration.id, status=status.PREPARING, dest_compute=dest.host,
                dest_node=dest.node, dest_host=dest.host,
            )  # fmt: skip
        to_source = LiveMigration(
            self.uuid, dest.host, self.migration.to_primitive(), self.block_migration
        )
        self.deps.compute.cast(self.context, instance.host or "", to_source)

    def _schedule(self, instance: Instance) -> SelectedHost:
        spec = dict(self.request_spec)
        ignore = [h for h in (*(spec.get("ignore_hosts") or ()), instance.host) if h]
        spec.update(
            flavor=instance.flavor.to_primitive(), instance_uuid=self.uuid, num_instances=1,
            project_id=instance.project_id, user_id=instance.user_id, ignore_hosts=ignore,
            force_hosts=[], force_nodes=[], retry=None,
        )  # fmt: skip
        answer = self.deps.scheduler.select_destinations(
            self.context, SelectDestinations(spec, (self.uuid,), return_objects=True)
        )
        assert isinstance(answer, list) and answer and isinstance(answer[0], list), answer
        first = answer[0][0]
        assert isinstance(first, dict), first
        return SelectedHost.from_primitive(first)

    def _claim_forced(
        self, records: InstanceRecords, instance: Instance, host: str
    ) -> SelectedHost:
        """The requested host's node, claiming the source's resources there for the instance."""
        if host == instance.host:
            raise Invalid(f"Unable to migrate instance ({self.uuid}) to current host ({host}).")
        with reader(records.db).connect() as conn:
            nodes = compute_nodes.nodes_of_host(conn, host)
        if not nodes:
            raise ComputeHostNotFound(host)
        node = nodes[0]
        assert self.migration is not None
        held = self.deps.placement.get_allocations(self.migration.uuid)
        resources: dict[str, int] = {}
        for amounts in held.allocations.values():
            for rc, amount in amounts.items():
                resources[rc] = resources.get(rc, 0) + amount
        current = self.deps.placement.get_allocations(self.uuid)
        self.deps.placement.claim(
            self.uuid, {str(node.uuid): resources}, project_id=instance.project_id,
            user_id=instance.user_id, consumer_generation=current.generation,
        )  # fmt: skip
        return SelectedHost.from_primitive({"host": host, "nodename": node.hypervisor_hostname})

    def rollback(self, records: InstanceRecords, exc: BaseException) -> None:
        """Allocations back to the instance, migration ``error``, task state cleared, fault."""
        roll_back_move(self.deps, records, self.uuid, self.migration, self.moved, exc)
