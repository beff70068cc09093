"""Rebuild on the instance's own host (Nova's ComputeTaskManager.rebuild_instance without a
destination): the conductor hands the rebuild to the compute host that runs the instance.

Nova also asks the scheduler whether the current host still accepts a *new* image (image
property filters limited to that host); OpenKeel's filters take no image properties yet, so the
host is kept as is. A failure here (no host: a server that never landed) clears the task state
with a fault; the server stays as it was.
"""

from __future__ import annotations

import logging

from openkeel.conductor.context import ConductorDeps
from openkeel.conductor.tasks.recorded import run_recorded
from openkeel.db.records import InstanceRecords
from openkeel.domain.errors import Invalid
from openkeel.domain.instances import InstanceNotFound, InstanceUpdate
from openkeel.rpc.message import CallContext
from openkeel.rpc.messages import compute as compute_messages
from openkeel.rpc.messages.conductor import RebuildInstance

LOG = logging.getLogger(__name__)
EVENT = "conductor_rebuild_instance"


class RebuildTask:
    def __init__(self, deps: ConductorDeps, context: CallContext, msg: RebuildInstance) -> None:
        self.deps, self.context, self.msg = deps, context, msg

    def execute(self) -> None:
        run_recorded(self.deps, self.context, self.msg.instance_uuid, EVENT, self._rebuild, self._rollback)  # fmt: skip

    def _rebuild(self, records: InstanceRecords) -> None:
        instance = records.get(self.msg.instance_uuid)
        if not instance.host:
            raise Invalid(f"Instance {instance.uuid} has no host to be rebuilt on.")
        msg = self.msg
        self.deps.compute.cast(
            self.context,
            instance.host,
            compute_messages.RebuildInstance(
                instance.uuid,
                image_ref=msg.image_ref,
                orig_image_ref=msg.orig_image_ref,
                admin_password=msg.admin_password,
                preserve_ephemeral=msg.preserve_ephemeral,
            ),
        )

    def _rollback(self, records: InstanceRecords, exc: BaseException) -> None:
        try:
            records.add_fault(self.msg.instance_uuid, exc, None)
            records.update(self.msg.instance_uuid, InstanceUpdate(task_state=None))
        except InstanceNotFound:
            LOG.info("Instance %s was deleted during its rebuild", self.msg.instance_uuid)
