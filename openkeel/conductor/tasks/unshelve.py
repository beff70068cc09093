"""unshelve_instance (Nova's ComputeTaskManager.unshelve_instance).

A SHELVED server is still on its host: task ``powering-on`` and compute's ``start_instance``
(which also deletes the shelved image). A SHELVED_OFFLOADED server goes through the scheduler
with its request spec (the availability zone and requested host the API saved in it), which
claims the chosen host; that host spawns it from the shelved image. No valid host (or any other
failure here): the task is cleared with a fault and the server stays offloaded.
"""

from __future__ import annotations

import logging
from typing import Any

from openkeel.conductor.context import ConductorDeps
from openkeel.conductor.selections import SelectedHost
from openkeel.conductor.tasks.recorded import run_recorded
from openkeel.db.records import InstanceRecords
from openkeel.domain.errors import Invalid
from openkeel.domain.instances import InstanceNotFound, InstanceUpdate
from openkeel.domain.states import TaskState, VmState
from openkeel.rpc.message import CallContext
from openkeel.rpc.messages import compute as compute_messages
from openkeel.rpc.messages.conductor import UnshelveInstance
from openkeel.rpc.messages.scheduler import SelectDestinations

LOG = logging.getLogger(__name__)
EVENT = "conductor_unshelve_instance"


class UnshelveTask:
    def __init__(self, deps: ConductorDeps, context: CallContext, msg: UnshelveInstance) -> None:
        self.deps, self.context, self.msg = deps, context, msg

    def execute(self) -> None:
        run_recorded(self.deps, self.context, self.msg.instance_uuid, EVENT, self._unshelve, self._rollback)  # fmt: skip

    def _unshelve(self, records: InstanceRecords) -> None:
        uuid = self.msg.instance_uuid
        instance = records.get(uuid)
        if instance.vm_state == VmState.SHELVED and instance.host:
            records.update(uuid, InstanceUpdate(task_state=TaskState.POWERING_ON.value),
                           expected_task_state=TaskState.UNSHELVING.value)  # fmt: skip
            self.deps.compute.cast(
                self.context, instance.host, compute_messages.StartInstance(uuid)
            )
            return
        if instance.vm_state != VmState.SHELVED_OFFLOADED:
            raise Invalid(f"Instance {uuid} is {instance.vm_state}: nothing to unshelve.")
        spec = dict(self.msg.request_spec or {})
        spec.update(
            instance_uuid=uuid, num_instances=1, project_id=instance.project_id,
            user_id=instance.user_id, flavor=instance.flavor.to_primitive(), retry=None,
            force_hosts=[], force_nodes=[], ignore_hosts=[],
        )  # fmt: skip
        answer: Any = self.deps.scheduler.select_destinations(
            self.context, SelectDestinations(spec, (uuid,), return_objects=True)
        )
        chosen = SelectedHost.from_primitive(answer[0][0])
        message = compute_messages.UnshelveInstance(
            uuid,
            image_id=instance.system_metadata.get("shelved_image_id"),
            node=chosen.node,
            request_spec=spec,
        )
        self.deps.compute.cast(self.context, chosen.host, message)

    def _rollback(self, records: InstanceRecords, exc: BaseException) -> None:
        uuid = self.msg.instance_uuid
        try:
            records.add_fault(uuid, exc, None)
            records.update(uuid, InstanceUpdate(task_state=None))
        except InstanceNotFound:
            LOG.info("Instance %s was deleted during its unshelve", uuid)
