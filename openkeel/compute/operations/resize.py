"""Resize and cold migration on the compute hosts (Nova's ComputeManager steps).

Destination ``prep_resize`` (record the destination, keep old/new flavors on the instance)
→ source ``resize_instance`` (driver.migrate_disk_and_power_off; the instance now points at
the destination) → destination ``finish_resize`` (driver.finish_migration with the new flavor;
vm_state resized: VERIFY_RESIZE). Then either source ``confirm_resize`` (driver.
confirm_migration, the migration consumer's allocations deleted, back to active/stopped) or
destination ``revert_resize`` (destroy the new guest) → source ``finish_revert_resize``
(driver.finish_revert_migration, old flavor and host back, allocations moved back from the
migration consumer). Placement: the conductor moved the source allocation to the migration's
uuid and the scheduler claimed the new flavor for the instance on the destination.

Failures before the guest moved roll everything back (allocations, migration ``error``, no
task state, a fault) leaving the server as it was; failures after it moved put it in ERROR with
a fault, as Nova. Every step records its ``compute_<step>`` event under the user's action.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Mapping
from typing import Any

from openkeel.clients.placement_errors import PlacementError
from openkeel.compute import guest, notifying
from openkeel.compute.host import ComputeHost
from openkeel.compute.operations import volume_moves
from openkeel.compute.operations.outcome import GONE, bind_ports, free_allocations, set_error
from openkeel.db.repositories import migrations
from openkeel.domain import migrations as status
from openkeel.domain.instances import FlavorSnapshot, Instance, InstanceNotFound, InstanceUpdate
from openkeel.domain.migrations import Migration
from openkeel.domain.states import TaskState, VmState
from openkeel.rpc.clients.compute import ComputeRpcClient, instance_host
from openkeel.rpc.message import CallContext
from openkeel.rpc.messages import compute as m
from openkeel.virt.model import DiskTransfer, InstanceSpec, MigrationRef

LOG = logging.getLogger(__name__)

OLD_VM_STATE = "old_vm_state"
# Moves whose destination claims the instance's new flavor (live migrations keep theirs).
MOVE_TYPES = ("resize", "migration")
Step = Callable[[Instance, Migration], None]


class MoveAborted(Exception):
    """Marks a failure after which the server stays where it was (rolled back)."""


def compute_client(host: ComputeHost) -> ComputeRpcClient:
    """A compute RPC client on this host's transport (built once per host)."""
    client = getattr(host, "_resize_compute_client", None)
    if client is None:
        client = ComputeRpcClient(host.conductor.rpc.transport)
        object.__setattr__(host, "_resize_compute_client", client)
    return client


def _migration(host: ComputeHost, data: Mapping[str, Any]) -> Migration:
    with host.records.db.connect() as conn:
        return migrations.get(conn, int(data["id"]))


def set_migration(host: ComputeHost, migration: Migration, **values: Any) -> Migration:
    with host.records.db.begin() as conn:
        return migrations.update(conn, migration.id, **values)


def fail_migration(host: ComputeHost, migration: Migration) -> Migration:
    """Mark a move that cannot go on ``error`` and free what its consumer holds at once: the
    source side of a guest that moved (or of an instance that is gone) serves nobody, and the
    orphan audit would only free it a tick later, with the capacity taken until then."""
    failed = set_migration(host, migration, status=status.ERROR)
    free_allocations(host, migration.uuid)
    return failed


def migration_ref(migration: Migration) -> MigrationRef:
    return MigrationRef(
        migration_id=migration.id,
        source_host=migration.source_compute or "",
        dest_host=migration.dest_compute or "",
        source_node=migration.source_node or "",
        dest_node=migration.dest_node or "",
        migration_type=migration.migration_type,
    )


def flavored_spec(
    host: ComputeHost, instance: Instance, flavor: FlavorSnapshot | None
) -> InstanceSpec:
    return guest.instance_spec(
        host.conf, dataclasses.replace(instance, flavor=flavor or instance.flavor)
    )


def power_state(host: ComputeHost, instance: Instance) -> int:
    return int(host.driver.get_info(guest.instance_ref(host.conf, instance), use_cache=False).state)


def was_stopped(instance: Instance) -> bool:
    return instance.system_metadata.get(OLD_VM_STATE) == VmState.STOPPED.value


def run_step(
    host: ComputeHost,
    context: CallContext,
    uuid: str,
    migration_data: Mapping[str, Any],
    event: str,
    body: Step,
) -> None:
    """Lock, event, body; roll back (MoveAborted) or ERROR on failure. Never raises."""
    with host.locks.hold(uuid):
        try:
            instance = host.records.get(uuid)
            migration = _migration(host, migration_data)
        except InstanceNotFound:
            LOG.info("Instance %s disappeared before %s", uuid, event)
            return
        host.records.event_start(uuid, context.request_id, event, host.host)
        notifying.started(host, context, uuid, event)
        failure: BaseException | None = None
        try:
            body(instance, migration)
        except GONE:
            LOG.info("Instance %s was deleted during %s", uuid, event)
        except MoveAborted as exc:
            cause = exc.__cause__ or exc
            failure = cause
            roll_back_move(host, uuid, migration, cause)
        except Exception as exc:
            LOG.exception("%s of instance %s failed", event, uuid)
            failure = exc
            fail_moved(host, uuid, migration, exc)
        notifying.finished(host, context, uuid, event, failure)
        host.records.event_finish(uuid, context.request_id, event, failure)


def fail_moved(host: ComputeHost, uuid: str, migration: Migration, exc: BaseException) -> None:
    """A resize or cold migration that failed after the guest left the source: the server stays
    on the destination in ERROR with a fault, and with the flavor the destination's claim holds
    (the new one, whether or not the failed step had switched it), so that its allocation and its
    flavor agree; the source side, held by the migration, is freed."""
    fail_migration(host, migration)
    try:
        instance = host.records.get(uuid)
        if migration.migration_type in MOVE_TYPES and instance.new_flavor is not None:
            host.records.update(
                uuid,
                InstanceUpdate(
                    host=migration.dest_compute or instance.host,
                    node=migration.dest_node or instance.node,
                    flavor=instance.new_flavor,
                ),
            )
    except InstanceNotFound:
        pass
    set_error(host, uuid, exc)


def roll_back_move(host: ComputeHost, uuid: str, migration: Migration, exc: BaseException) -> None:
    """The server stays on the source as it was: allocations back, no task, a fault."""
    LOG.warning("Move of %s rolled back: %s", uuid, exc)
    try:
        host.placement.move_allocations(migration.uuid, uuid)
    except PlacementError:
        LOG.exception("Could not give %s its allocations back", uuid)
    set_migration(host, migration, status=status.ERROR)
    try:
        host.records.add_fault(uuid, exc, host.host)  # first: seen with the task cleared
        host.records.update(
            uuid,
            InstanceUpdate(
                task_state=None,
                host=migration.source_compute,
                node=migration.source_node,
                old_flavor=None,
                new_flavor=None,
            ),
        )
    except InstanceNotFound:
        LOG.info("Instance %s disappeared during the rollback", uuid)


# --- destination: prep_resize ------------------------------------------------------------------


def prep_resize(host: ComputeHost, context: CallContext, msg: m.PrepResize) -> None:
    """Record this host as destination, keep old/new flavors, ask the source to move."""
    uuid, node = msg.instance_uuid, msg.node
    new_flavor = FlavorSnapshot.from_primitive(msg.flavor)

    def body(instance: Instance, migration: Migration) -> None:
        try:
            migration = set_migration(
                host, migration, dest_compute=host.host, dest_node=node, dest_host=host.host
            )
            sysmeta = {**instance.system_metadata, OLD_VM_STATE: instance.vm_state or ""}
            updated = host.records.update(
                uuid,
                InstanceUpdate(
                    old_flavor=instance.flavor, new_flavor=new_flavor, system_metadata=sysmeta
                ),
                expected_task_state=TaskState.RESIZE_PREP.value,
            )
            to_source = m.ResizeInstance(
                uuid, migration.to_primitive(), image=msg.image, request_spec=msg.request_spec,
                clean_shutdown=msg.clean_shutdown,
            )  # fmt: skip
            compute_client(host).cast(context, instance_host(updated), to_source)
        except Exception as exc:
            raise MoveAborted(str(exc)) from exc

    run_step(host, context, uuid, msg.migration, "compute_prep_resize", body)


# --- source: resize_instance ------------------------------------------------------------------


def resize_instance(host: ComputeHost, context: CallContext, msg: m.ResizeInstance) -> None:
    """Power off and hand the disks over; the instance now belongs to the destination."""
    uuid = msg.instance_uuid

    def body(instance: Instance, migration: Migration) -> None:
        try:
            migration = set_migration(host, migration, status=status.MIGRATING)
            host.records.update(
                uuid,
                InstanceUpdate(task_state=TaskState.RESIZE_MIGRATING.value, progress=0),
                expected_task_state=TaskState.RESIZE_PREP.value,
            )
            timeout = host.conf.shutdown_timeout if msg.clean_shutdown else 0
            spec = flavored_spec(host, instance, None)
            new_spec = flavored_spec(host, instance, instance.new_flavor)
            disks = host.driver.migrate_disk_and_power_off(
                spec, migration.dest_compute or "", new_spec.flavor, timeout=timeout,
                retry_interval=host.conf.compute.shutdown_retry_interval,
            )  # fmt: skip
        except Exception as exc:
            _restart_source(host, instance)
            raise MoveAborted(str(exc)) from exc
        # This host's connections to the volumes end; each stays reserved for the server.
        volume_moves.reserve_anew(host, context, uuid)
        migration = set_migration(host, migration, status=status.POST_MIGRATING)
        host.records.update(
            uuid,
            InstanceUpdate(
                task_state=TaskState.RESIZE_MIGRATED.value,
                host=migration.dest_compute,
                node=migration.dest_node,
                power_state=power_state(host, instance),
            ),
            expected_task_state=TaskState.RESIZE_MIGRATING.value,
        )
        disk_info = {"instance_uuid": disks.instance_uuid, "disks": [dict(d) for d in disks.disks]}
        to_destination = m.FinishResize(uuid, migration.to_primitive(), disk_info)
        compute_client(host).cast(context, migration.dest_compute or "", to_destination)

    run_step(host, context, uuid, msg.migration, "compute_resize_instance", body)


def _restart_source(host: ComputeHost, instance: Instance) -> None:
    """After a failed hand-over the source guest runs again (unless it was stopped)."""
    if instance.vm_state == VmState.STOPPED.value:
        return
    try:
        host.driver.power_on(guest.instance_spec(host.conf, instance))
    except Exception:
        LOG.exception("Could not power %s back on after a failed move", instance.uuid)


# --- destination: finish_resize ------------------------------------------------------------------


def finish_resize(host: ComputeHost, context: CallContext, msg: m.FinishResize) -> None:
    """Define the guest here with the new flavor; the user verifies (VERIFY_RESIZE)."""
    uuid, disk_info = msg.instance_uuid, msg.disk_info

    def body(instance: Instance, migration: Migration) -> None:
        instance = host.records.update(
            uuid,
            InstanceUpdate(
                task_state=TaskState.RESIZE_FINISH.value,
                flavor=instance.new_flavor or instance.flavor,
            ),
            expected_task_state=TaskState.RESIZE_MIGRATED.value,
        )
        bind_ports(host, uuid, instance.project_id)
        disks = DiskTransfer(
            str(disk_info.get("instance_uuid") or uuid),
            tuple(dict(d) for d in disk_info.get("disks") or ()),
        )
        spec = dataclasses.replace(
            flavored_spec(host, instance, None),
            block_devices=volume_moves.connect_here(host, context, uuid),
        )
        host.driver.finish_migration(
            migration_ref(migration), spec, disks,
            resize_instance=migration.is_resize, power_on=not was_stopped(instance),
        )  # fmt: skip
        volume_moves.complete(host, context, uuid)
        host.records.update(
            uuid,
            InstanceUpdate(
                vm_state=VmState.RESIZED.value,
                task_state=None,
                power_state=power_state(host, instance),
                launched_at=host.clock.now(),
            ),
            expected_task_state=TaskState.RESIZE_FINISH.value,
        )
        set_migration(host, migration, status=status.FINISHED)

    run_step(host, context, uuid, msg.migration, "compute_finish_resize", body)
