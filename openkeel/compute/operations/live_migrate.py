"""Live migration on the compute hosts (Nova's ComputeManager live-migration steps).

Source ``live_migration``: the server's ports get an inactive binding on the destination where
the network has multiple port bindings (Neutron's ``binding-extended``: Nova's conductor
``bind_ports_to_host``; a port the destination cannot bind fails the migration before anything
moved), migration ``running``, driver.live_migration with a progress callback writing the
migration's memory_* counters; once the guest moved: the destination's bindings are activated
(Nova's ``migrate_instance_start``), the migration consumer's (source) allocation is deleted,
migration ``post-migrating``, destination ``post_live_migration_at_destination`` (RPC call: the
guest is taken over, the ports bound there, the instance now points at the destination, no task
state, the source's port bindings deleted), migration ``completed``. Abort (``live_migration_abort``,
the driver raises MigrationAborted) or a failure before the guest moved rolls back: allocations
back from the migration consumer to the instance (replacing the destination claim), migration
``cancelled`` / ``error``, the destination's port bindings deleted, no task state (a fault on
error); the server stays on the source.
A failure after the guest moved puts the server in ERROR with a fault, as Nova.
Called by openkeel.compute.endpoint.ComputeEndpoint.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from openkeel.clients.placement_errors import PlacementError
from openkeel.compute import guest, notifying
from openkeel.compute.host import ComputeHost
from openkeel.compute.operations import boot_volumes, volume_moves
from openkeel.compute.operations.outcome import bind_ports, set_error
from openkeel.compute.operations.resize import (
    compute_client,
    fail_migration,
    power_state,
    set_migration,
)
from openkeel.db.repositories import migrations
from openkeel.db.repositories.block_devices import DeviceMapping
from openkeel.domain import migrations as status
from openkeel.domain.instances import Instance, InstanceNotFound, InstanceUpdate
from openkeel.domain.migrations import Migration
from openkeel.domain.states import TaskState
from openkeel.network.errors import NetworkError
from openkeel.rpc.message import CallContext
from openkeel.rpc.messages import compute as m
from openkeel.virt.errors import MigrationAborted
from openkeel.virt.model import LiveMigrationProgress

LOG = logging.getLogger(__name__)


class _Moved(Exception):
    """A failure after the guest reached the destination (the server goes to ERROR)."""


def live_migration(
    host: ComputeHost,
    context: CallContext,
    uuid: str,
    dest: str,
    migration_data: Mapping[str, Any],
    block_migration: bool | None,
) -> None:
    """Source: move the guest, hand over to the destination, or roll back. Never raises."""
    with host.locks.hold(uuid):
        try:
            instance = host.records.get(uuid)
        except InstanceNotFound:
            LOG.info("Instance %s disappeared before its live migration", uuid)
            return
        with host.records.db.connect() as conn:
            migration = migrations.get(conn, int(migration_data["id"]))
        event = "compute_live_migration"
        host.records.event_start(uuid, context.request_id, event, host.host)
        notifying.started(host, context, uuid, event)
        failure: BaseException | None = None
        # The volumes as attached here: deleted once the guest moved, restored on a rollback.
        originals = volume_moves.attached_volumes(host, uuid)
        try:
            _migrate(host, context, instance, migration, dest, block_migration, originals)
        except MigrationAborted as exc:
            failure = exc
            volume_moves.restore_old(host, context, uuid, originals)
            _notified_roll_back(host, context, uuid, migration, status.CANCELLED, None)
        except _Moved as exc:
            failure = exc.__cause__ or exc
            LOG.error("Live migration of %s failed after the guest moved: %s", uuid, failure)
            fail_migration(host, migration)
            set_error(host, uuid, failure)
        except Exception as exc:
            LOG.warning("Live migration of %s failed: %s", uuid, exc)
            failure = exc
            volume_moves.restore_old(host, context, uuid, originals)
            _notified_roll_back(host, context, uuid, migration, status.ERROR, exc)
        notifying.finished(host, context, uuid, event, failure)
        host.records.event_finish(uuid, context.request_id, event, failure)


def _migrate(
    host: ComputeHost,
    context: CallContext,
    instance: Instance,
    migration: Migration,
    dest: str,
    block_migration: bool | None,
    originals: list[DeviceMapping],
) -> None:
    if migration.status == status.CANCELLED:  # aborted while queued/preparing (2.65)
        raise MigrationAborted(instance.uuid)
    # Nova's conductor binds them in its pre-checks (decision 0072): nothing has moved yet.
    host.network.bind_ports_to_host(host.net_ref(instance.uuid, instance.project_id), dest)
    # The destination's pre step: its volume attachments (decision 0070), recorded and notified.
    prepare = m.PreLiveMigration(instance.uuid, block_migration, migration.to_primitive())
    compute_client(host).call(context, dest, prepare, long=True)
    migration = set_migration(host, migration, status=status.RUNNING)

    def on_progress(progress: LiveMigrationProgress) -> None:
        total, remaining = progress.memory_total_bytes, progress.memory_remaining_bytes
        set_migration(
            host, migration, memory_total=total, memory_remaining=remaining,
            memory_processed=max(0, total - remaining),
        )  # fmt: skip

    ref = guest.instance_ref(host.conf, instance)
    host.driver.live_migration(ref, dest, on_progress, block_migration=bool(block_migration))
    notifying.step(host, context, instance.uuid, "live_migration_post", "start")
    try:
        host.network.activate_port_bindings(host.net_ref(instance.uuid, instance.project_id), dest)
        volume_moves.drop_old(host, context, originals)
        _free_source(host, migration)
        migration = set_migration(host, migration, status=status.POST_MIGRATING)
        takeover = m.PostLiveMigrationAtDestination(instance.uuid, block_migration)
        compute_client(host).call(context, dest, takeover, long=True)
        set_migration(host, migration, status=status.COMPLETED)
    except Exception as exc:
        raise _Moved(str(exc)) from exc
    notifying.step(host, context, instance.uuid, "live_migration_post", "end")


def _notified_roll_back(
    host: ComputeHost,
    context: CallContext,
    uuid: str,
    migration: Migration,
    end: str,
    exc: BaseException | None,
) -> None:
    """``_roll_back`` between instance.live_migration_rollback.start and .end (Nova's), the
    destination told to forget the migration in between."""
    notifying.step(host, context, uuid, "live_migration_rollback", "start")
    _roll_back(host, uuid, migration, end, exc)
    if migration.dest_compute and migration.dest_compute != host.host:
        try:
            forget = m.RollbackLiveMigrationAtDestination(uuid)
            compute_client(host).cast(context, migration.dest_compute, forget)
        except Exception:  # the rollback here is done; the destination holds nothing of it
            LOG.exception("Could not tell %s to roll back %s", migration.dest_compute, uuid)
    notifying.step(host, context, uuid, "live_migration_rollback", "end")


def _free_source(host: ComputeHost, migration: Migration) -> None:
    """The source allocation (held by the migration consumer) is no longer needed."""
    try:
        host.placement.delete_allocations(migration.uuid)
    except PlacementError:
        LOG.exception("Could not delete the source allocation of migration %s", migration.uuid)


def _roll_back(
    host: ComputeHost, uuid: str, migration: Migration, end: str, exc: BaseException | None
) -> None:
    """The server stays on the source: allocations back, the destination's port bindings
    deleted, migration ``end``, no task state."""
    try:
        host.placement.move_allocations(migration.uuid, uuid)
    except PlacementError:
        LOG.exception("Could not give %s its allocations back", uuid)
    _drop_bindings(host, uuid, migration.dest_compute)
    set_migration(host, migration, status=end)
    try:
        if exc is not None:  # the fault first: whoever sees the task cleared finds it
            host.records.add_fault(uuid, exc, host.host)
        host.records.update(uuid, InstanceUpdate(task_state=None))
    except InstanceNotFound:
        LOG.info("Instance %s disappeared during the rollback", uuid)


def _drop_bindings(host: ComputeHost, uuid: str, on_host: str | None) -> None:
    """The server's port bindings on ``on_host`` deleted; a failure is only logged (Nova:
    "You may need to manually clean up resources in the network service")."""
    if not on_host:
        return
    try:
        project_id = host.records.get(uuid).project_id
        host.network.delete_port_bindings(host.net_ref(uuid, project_id), on_host)
    except InstanceNotFound:
        return
    except NetworkError as exc:
        LOG.error("Network cleanup failed for host %s of %s: %s", on_host, uuid, exc)


def pre_live_migration(host: ComputeHost, context: CallContext, uuid: str) -> None:
    """Destination, before the guest moves, recorded and notified as Nova's
    ``pre_live_migration`` (instance.live_migration_pre.start/.end): new attachments of the
    server's volumes with this host's connector, completed (the source's stay until the guest
    moved); raises, with nothing left, on failure. The guest is defined when it arrives (the
    driver's migration creates it here)."""
    with host.locks.hold(uuid):
        _destination_step(
            host, context, uuid, "compute_pre_live_migration",
            lambda: volume_moves.attach_for_live(host, context, uuid),
        )  # fmt: skip


def rollback_live_migration_at_destination(
    host: ComputeHost, context: CallContext, uuid: str
) -> None:
    """Destination, after the source rolled a live migration back: recorded and notified as
    Nova's (instance.live_migration_rollback_dest.start/.end); the driver's migration left
    nothing here (KubeVirt removes the target pod of a failed migration itself)."""
    _destination_step(host, context, uuid, "compute_rollback_live_migration_at_destination")


def _destination_step(
    host: ComputeHost,
    context: CallContext,
    uuid: str,
    event: str,
    work: Callable[[], None] | None = None,
) -> None:
    """``work`` between the action event's start and finish and the .start/.end
    notifications (its failure recorded in both, then raised)."""
    host.records.event_start(uuid, context.request_id, event, host.host)
    notifying.started(host, context, uuid, event)
    failure: BaseException | None = None
    try:
        if work is not None:
            work()
    except Exception as exc:
        failure = exc
        raise
    finally:
        notifying.finished(host, context, uuid, event, failure)
        host.records.event_finish(uuid, context.request_id, event, failure)


def post_live_migration_at_destination(
    host: ComputeHost, context: CallContext, uuid: str, block_migration: bool | None
) -> None:
    """Destination: take the guest over; the instance now lives here (raises on failure)."""

    def take_over() -> None:
        instance = host.records.get(uuid)
        spec = replace(guest.instance_spec(host.conf, instance),
                       block_devices=boot_volumes.attached(host, uuid))  # fmt: skip
        host.driver.post_live_migration_at_destination(spec)
        bind_ports(host, uuid, instance.project_id)
        source = instance.host
        node = host.driver.get_available_nodes()[0]
        host.records.update(
            uuid,
            InstanceUpdate(
                host=host.host, node=node, task_state=None,
                power_state=power_state(host, instance),
            ),
            expected_task_state=TaskState.MIGRATING.value,
        )  # fmt: skip
        if source != host.host:
            _drop_bindings(host, uuid, source)

    with host.locks.hold(uuid):
        _destination_step(
            host, context, uuid, "compute_post_live_migration_at_destination", take_over
        )


def live_migration_abort(
    host: ComputeHost, context: CallContext, uuid: str, migration_id: int
) -> None:
    """Source: a queued/preparing migration is cancelled before it starts; a running one is
    cancelled by the driver and the running live_migration() then rolls back."""
    with host.records.db.begin() as conn:
        migration = migrations.get(conn, int(migration_id))
        if migration.status in (status.QUEUED, status.PREPARING, status.ACCEPTED):
            migrations.update(conn, migration.id, status=status.CANCELLED)
            return
    _driver_step(host, context, uuid, "compute_live_migration_abort", "abort")


def live_migration_force_complete(host: ComputeHost, context: CallContext, uuid: str) -> None:
    """Source: ask the driver to make the migration converge."""
    _driver_step(host, context, uuid, "compute_live_migration_force_complete", "force")


def _driver_step(host: ComputeHost, context: CallContext, uuid: str, event: str, op: str) -> None:
    try:
        instance = host.records.get(uuid)
    except InstanceNotFound:
        return
    host.records.event_start(uuid, context.request_id, event, host.host)
    notifying.started(host, context, uuid, event)
    failure: BaseException | None = None
    ref = guest.instance_ref(host.conf, instance)
    try:
        if op == "abort":
            host.driver.live_migration_abort(ref)
        else:
            host.driver.live_migration_force_complete(ref)
    except Exception as exc:
        LOG.warning("%s of %s failed: %s", event, uuid, exc)
        failure = exc
    notifying.finished(host, context, uuid, event, failure)
    host.records.event_finish(uuid, context.request_id, event, failure)
