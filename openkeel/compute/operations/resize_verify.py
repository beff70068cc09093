"""The end of a resize / cold migration: confirm (source) or revert (destination → source).

``confirm_resize`` on the source: driver.confirm_migration deletes the old guest, the
migration consumer's allocations (the source resources) are deleted, the migration is
``confirmed`` and the server active again (stopped if it was). ``revert_resize`` on the
destination destroys the new guest (not on a same-host resize: the driver keeps both
definitions), marks the migration ``reverted`` and casts ``finish_revert_resize`` to the source,
which restores the old guest, flavor and host and moves the allocations back from the
migration consumer to the instance (replacing its destination claim). Steps share
``run_step`` of openkeel.compute.operations.resize (lock, event, failure handling).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping
from typing import Any

from openkeel.compute import guest
from openkeel.compute.host import ComputeHost
from openkeel.compute.operations import volume_moves
from openkeel.compute.operations.outcome import bind_ports, free_allocations
from openkeel.compute.operations.resize import (
    OLD_VM_STATE,
    compute_client,
    flavored_spec,
    migration_ref,
    power_state,
    run_step,
    set_migration,
    was_stopped,
)
from openkeel.domain import migrations as status
from openkeel.domain.instances import Instance, InstanceUpdate
from openkeel.domain.migrations import Migration
from openkeel.domain.states import PowerState, TaskState, VmState
from openkeel.rpc.message import CallContext
from openkeel.rpc.messages import compute as m

LOG = logging.getLogger(__name__)


def _settled_state(instance: Instance, power: int) -> str:
    if power == int(PowerState.RUNNING):
        return VmState.ACTIVE.value
    return VmState.STOPPED.value if was_stopped(instance) else VmState.ACTIVE.value


def _without_old_state(instance: Instance) -> dict[str, str]:
    return {k: v for k, v in instance.system_metadata.items() if k != OLD_VM_STATE}


def confirm_resize(
    host: ComputeHost, context: CallContext, uuid: str, migration_data: Mapping[str, Any]
) -> None:
    """Source: drop the old guest and the source allocations; the server is settled."""

    def body(instance: Instance, migration: Migration) -> None:
        host.driver.confirm_migration(
            migration_ref(migration), guest.instance_ref(host.conf, instance)
        )
        free_allocations(host, migration.uuid)
        set_migration(host, migration, status=status.CONFIRMED)
        power = instance.power_state or 0
        host.records.update(
            uuid,
            InstanceUpdate(
                vm_state=_settled_state(instance, power),
                task_state=None,
                old_flavor=None,
                new_flavor=None,
                system_metadata=_without_old_state(instance),
            ),
            expected_vm_state=VmState.RESIZED.value,
        )

    run_step(host, context, uuid, migration_data, "compute_confirm_resize", body)


def revert_resize(
    host: ComputeHost,
    context: CallContext,
    uuid: str,
    migration_data: Mapping[str, Any],
    request_spec: Mapping[str, Any],
) -> None:
    """Destination: destroy the new guest, then the source restores the old one."""

    def body(instance: Instance, migration: Migration) -> None:
        if migration.status != status.REVERTING:
            # A late duplicate: the restart's recovery (move_recovery.resume_revert) ran it.
            LOG.info("Revert of %s already handled (migration %s)", uuid, migration.status)
            return
        if migration.source_compute != migration.dest_compute:
            host.driver.destroy(
                guest.instance_ref(host.conf, instance),
                network=guest.interfaces(instance.network_info),
            )
        # This host's connections end; the source connects the volumes again.
        volume_moves.reserve_anew(host, context, uuid)
        migration = set_migration(host, migration, status=status.REVERTED)
        to_source = m.FinishRevertResize(uuid, migration.to_primitive())
        compute_client(host).cast(context, migration.source_compute or "", to_source)

    run_step(host, context, uuid, migration_data, "compute_revert_resize", body)


def finish_revert_resize(
    host: ComputeHost, context: CallContext, uuid: str, migration_data: Mapping[str, Any]
) -> None:
    """Source: old flavor, host and guest back; allocations back from the migration."""

    def body(instance: Instance, migration: Migration) -> None:
        if instance.task_state != TaskState.RESIZE_REVERTING.value:
            LOG.info("Revert of %s already finished (task %s)", uuid, instance.task_state)
            return  # a late duplicate of a revert the restart's recovery finished
        old = instance.old_flavor or instance.flavor
        instance = host.records.update(
            uuid,
            InstanceUpdate(
                flavor=old,
                host=migration.source_compute,
                node=migration.source_node,
            ),
            expected_task_state=TaskState.RESIZE_REVERTING.value,
        )
        bind_ports(host, uuid, instance.project_id, consumer=migration.uuid)
        spec = dataclasses.replace(
            flavored_spec(host, instance, old),
            block_devices=volume_moves.connect_here(host, context, uuid),
        )
        host.driver.finish_revert_migration(
            migration_ref(migration), spec, power_on=not was_stopped(instance),
        )  # fmt: skip
        volume_moves.complete(host, context, uuid)
        host.placement.move_allocations(migration.uuid, uuid)
        power = power_state(host, instance)
        host.records.update(
            uuid,
            InstanceUpdate(
                vm_state=_settled_state(instance, power),
                task_state=None,
                power_state=power,
                old_flavor=None,
                new_flavor=None,
                system_metadata=_without_old_state(instance),
            ),
            expected_task_state=TaskState.RESIZE_REVERTING.value,
        )

    run_step(host, context, uuid, migration_data, "compute_finish_revert_resize", body)
