"""rebuild_instance (Nova's ComputeTaskManager): a rebuild on the instance's own host, or an
evacuation (``recreate``) to another host.

Rebuild: the conductor hands it to the compute host that runs the instance. With a new image
(the API then sends a request spec with the ``_nova_check_type: rebuild`` hint, forced to the
instance's node) it first asks the scheduler whether that host accepts the image (the filters
that judge images; nothing is claimed). No valid host: the image_ref goes back to the old
image and the server to ERROR with the fault, as Nova. Any other failure here clears the task
state with a fault.

Evacuation: the scheduler picks a destination (the source ignored; a requested host, forced
or not, as the requested destination: OpenKeel checks a forced host with the filters too) and
claims the instance's resources there; the migration gets its destination and
``pre-migrating``; the destination compute rebuilds the guest. No valid host: the server goes
to ERROR with a fault and the migration to ``error``, as Nova.
"""

from __future__ import annotations

import logging
from typing import Any

from openkeel.clients.placement_errors import PlacementError
from openkeel.conductor.context import ConductorDeps
from openkeel.conductor.selections import SelectedHost
from openkeel.conductor.tasks.recorded import notify_task_error, run_recorded
from openkeel.db.records import InstanceRecords
from openkeel.db.repositories import migrations
from openkeel.domain import migrations as mstatus
from openkeel.domain.errors import Invalid, NoValidHost
from openkeel.domain.instances import Instance, InstanceNotFound, InstanceUpdate
from openkeel.domain.states import VmState
from openkeel.notifications.instance_payloads import Initiator
from openkeel.rpc.message import CallContext
from openkeel.rpc.messages import Json
from openkeel.rpc.messages import compute as compute_messages
from openkeel.rpc.messages.conductor import RebuildInstance
from openkeel.rpc.messages.scheduler import SelectDestinations

LOG = logging.getLogger(__name__)
EVENT = "conductor_rebuild_instance"


class RebuildTask:
    def __init__(self, deps: ConductorDeps, context: CallContext, msg: RebuildInstance) -> None:
        self.deps, self.context, self.msg = deps, context, msg
        self.moved = False
        self.image_refused = False  # the scheduler found the new image unfit for the host

    def execute(self) -> None:
        run_recorded(self.deps, self.context, self.msg.instance_uuid, EVENT, self._rebuild, self._rollback)  # fmt: skip

    def _rebuild(self, records: InstanceRecords) -> None:
        instance = records.get(self.msg.instance_uuid)
        msg = self.msg
        if msg.recreate:
            host, node = self._destination(records, instance)
        elif instance.host:
            host, node = instance.host, instance.node
            if msg.request_spec is not None and msg.image_ref != msg.orig_image_ref:
                self._check_new_image(instance)
        else:
            raise Invalid(f"Instance {instance.uuid} has no host to be rebuilt on.")
        if self.deps.notifier.enabled:
            ctx = self.context
            who = Initiator(ctx.request_id, ctx.user_id, ctx.project_id)
            self.deps.notifier.instance_action(records.get(instance.uuid), "rebuild_scheduled", None, who)  # fmt: skip
        self.deps.compute.cast(
            self.context,
            host,
            compute_messages.RebuildInstance(
                instance.uuid,
                image_ref=msg.image_ref,
                orig_image_ref=msg.orig_image_ref,
                admin_password=msg.admin_password,
                preserve_ephemeral=msg.preserve_ephemeral,
                recreate=msg.recreate,
                node=node,
                migration=self._migration(records, host, node),
                target_state=msg.target_state,
                reimage_boot_volume=msg.reimage_boot_volume,
            ),
        )

    def _destination(self, records: InstanceRecords, instance: Instance) -> tuple[str, str | None]:  # fmt: skip
        spec = dict(self.msg.request_spec or {})
        if self.msg.host:
            spec["requested_destination"] = {"host": self.msg.host}
        # A host forced at boot does not bind the evacuation (Nova resets forced destinations).
        spec.update(
            instance_uuid=instance.uuid, num_instances=1, project_id=instance.project_id,
            user_id=instance.user_id, flavor=instance.flavor.to_primitive(), retry=None,
            force_hosts=[], force_nodes=[],
        )  # fmt: skip
        if self.msg.migration is not None:
            # The source's allocation goes to the migration (as for cold moves) so the
            # scheduler claims the destination for the instance; the source host frees it
            # when it comes back (compute/evacuated.py).
            self.moved = self.deps.placement.move_allocations(
                instance.uuid, str(self.msg.migration["uuid"]), target_consumer_type="MIGRATION"
            )
        answer: Any = self.deps.scheduler.select_destinations(
            self.context, SelectDestinations(spec, (instance.uuid,), return_objects=True)
        )
        chosen = SelectedHost.from_primitive(answer[0][0])  # per instance, chosen first
        return chosen.host, chosen.node

    def _check_new_image(self, instance: Instance) -> None:
        spec = dict(self.msg.request_spec or {})
        spec.update(instance_uuid=instance.uuid, num_instances=1, retry=None,
                    force_hosts=[instance.host], force_nodes=[instance.node] if instance.node else [])  # fmt: skip
        try:
            self.deps.scheduler.select_destinations(
                self.context, SelectDestinations(spec, (instance.uuid,), return_objects=True)
            )
        except NoValidHost:
            self.image_refused = True
            raise

    def _migration(self, records: InstanceRecords, host: str, node: str | None) -> Json | None:
        if self.msg.migration is None:
            return None
        with records.db.begin() as conn:
            updated = migrations.update(
                conn, int(self.msg.migration["id"]), dest_compute=host, dest_node=node,
                status=mstatus.PRE_MIGRATING,
            )  # fmt: skip
        primitive: Json = updated.to_primitive()
        return primitive

    def _rollback(self, records: InstanceRecords, exc: BaseException) -> None:
        uuid = self.msg.instance_uuid
        if self.moved and self.msg.migration is not None:
            try:
                self.deps.placement.move_allocations(str(self.msg.migration["uuid"]), uuid)
            except PlacementError:
                LOG.exception("Could not give %s its allocations back", uuid)
        try:
            records.add_fault(uuid, exc, None)
            if self.msg.recreate:  # Nova: a failed evacuation leaves the server in ERROR
                records.update(uuid, InstanceUpdate(vm_state=VmState.ERROR.value, task_state=None))  # fmt: skip
            elif self.image_refused:  # Nova: the old image back, the server in ERROR
                records.update(uuid, InstanceUpdate(
                    image_ref=self.msg.orig_image_ref, vm_state=VmState.ERROR.value, task_state=None,
                ))  # fmt: skip
            else:
                records.update(uuid, InstanceUpdate(task_state=None))
        except InstanceNotFound:
            LOG.info("Instance %s was deleted during its rebuild", uuid)
        if self.msg.migration is not None:
            with records.db.begin() as conn:
                migrations.update(conn, int(self.msg.migration["id"]), status=mstatus.ERROR)
        spec = {**(self.msg.request_spec or {}), "instance_uuid": uuid}
        notify_task_error(self.deps, self.context, records, uuid, "rebuild_server", spec, exc)
