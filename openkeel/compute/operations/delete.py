"""terminate_instance: destroy the guest, free networks and allocations, soft-delete the row.

Flow (Nova's _delete_instance): per-instance lock; action event ``compute_terminate_instance``;
task state ``deleting``; driver.destroy (idempotent); volumes' attachments deleted (and
``delete_on_termination`` volumes); network deallocation; Placement
allocations deleted; instance mapping ``queued_for_delete``; vm_state deleted, terminated_at,
row soft-deleted (``deleted = id``). A failing step puts the instance in ERROR with a fault
(the user may delete again). Also used by start-up reconciliation and soft-delete reclaim.
"""

from __future__ import annotations

import logging

from openkeel.compute import guest, notifying
from openkeel.compute.host import ComputeHost
from openkeel.compute.operations.outcome import free_allocations, set_error
from openkeel.compute.operations.volumes import release_volumes
from openkeel.db.repositories import instance_mappings
from openkeel.domain.instances import InstanceMappingNotFound, InstanceNotFound, InstanceUpdate
from openkeel.domain.states import PowerState, TaskState, VmState
from openkeel.rpc.message import CallContext

LOG = logging.getLogger(__name__)

EVENT = "compute_terminate_instance"


def terminate(host: ComputeHost, context: CallContext, uuid: str) -> None:
    """Delete instance ``uuid`` from this host; never raises."""
    # A volume-backed rebuild waiting for its root volume (operations/reimage.py) holds the
    # instance's lock: it gives up at once rather than at its time-out.
    host.events.cancel(uuid, names=("volume-reimaged",))
    with host.locks.hold(uuid):
        try:
            instance = host.records.get(uuid)
        except InstanceNotFound:
            LOG.info("Instance %s is already deleted", uuid)
            free_allocations(host, uuid)
            return
        host.records.event_start(uuid, context.request_id, EVENT, host.host)
        notifying.started(host, context, uuid, EVENT)
        failure: BaseException | None = None
        try:
            host.records.update(uuid, InstanceUpdate(task_state=TaskState.DELETING.value))
            notifying.step(host, context, uuid, "shutdown", "start")
            host.driver.destroy(
                guest.instance_ref(host.conf, instance),
                network=guest.interfaces(instance.network_info),
            )
            release_volumes(host, context, uuid)
            host.network.deallocate_for_instance(host.net_ref(uuid, instance.project_id))
            notifying.step(host, context, uuid, "shutdown", "end")
            free_allocations(host, uuid)
            _finish(host, uuid)
        except InstanceNotFound:
            LOG.info("Instance %s was deleted concurrently", uuid)
        except Exception as exc:
            LOG.exception("Delete of instance %s failed", uuid)
            failure = exc
            set_error(host, uuid, exc)
        notifying.finished(host, context, uuid, EVENT, failure)
        host.records.event_finish(uuid, context.request_id, EVENT, failure)


def _finish(host: ComputeHost, uuid: str) -> None:
    # The mapping first: killed between the two writes, the restart finishes the delete
    # (task deleting), where the other order would leave a deleted server's mapping counted.
    try:
        with host.api_db.begin() as conn:
            instance_mappings.set_queued_for_delete(conn, uuid)
    except InstanceMappingNotFound:
        LOG.debug("Instance %s has no mapping to queue for delete", uuid)
    host.records.delete_row(
        uuid,
        InstanceUpdate(
            vm_state=VmState.DELETED.value,
            task_state=None,
            power_state=int(PowerState.NOSTATE),
            terminated_at=host.clock.now(),
            network_info=[],
        ),
    )
