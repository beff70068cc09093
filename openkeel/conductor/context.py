"""The collaborators of conductor tasks and the steps several tasks share.

``ConductorDeps`` is built once by ``ConductorService``: API DB, cell DB engines, Placement,
scheduler and compute RPC clients. Shared steps: bury an unschedulable instance in cell0, set
ERROR with a fault, free allocations, cast build_and_run_instance.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import sqlalchemy as sa
from oslo_config import cfg

from openkeel.clients.placement import PlacementClient
from openkeel.clients.placement_errors import PlacementError
from openkeel.conductor.cells import CellEngines
from openkeel.conductor.selections import SelectedHost
from openkeel.db.cells import CELL0_UUID, list_cells
from openkeel.db.records import InstanceRecords
from openkeel.db.repositories import build_requests, instance_mappings
from openkeel.domain.instances import (
    BuildRequestNotFound,
    Instance,
    InstanceNotFound,
    InstanceUpdate,
)
from openkeel.domain.states import VmState
from openkeel.notifications.emitter import Notifier
from openkeel.notifications.instance_updates import SaveNotifier
from openkeel.rpc.clients.compute import ComputeRpcClient
from openkeel.rpc.clients.scheduler import SchedulerRpcClient
from openkeel.rpc.message import CallContext
from openkeel.rpc.messages.compute import BuildAndRunInstance
from openkeel.runtime.clock import Clock

LOG = logging.getLogger(__name__)

DEFAULT_MAX_ATTEMPTS = 3


def _audit_unit(conf: cfg.ConfigOpts) -> str:
    try:
        return str(conf.instance_usage_audit_period)
    except cfg.NoSuchOptError:
        return "month"


@dataclass
class ConductorDeps:
    conf: cfg.ConfigOpts
    api_db: sa.Engine
    cells: CellEngines
    placement: PlacementClient
    scheduler: SchedulerRpcClient
    compute: ComputeRpcClient
    clock: Clock
    # Notifications of the conductor (publisher nova-conductor:<host>); default: none sent.
    notifier: Notifier = field(default_factory=Notifier)

    def records(self, cell_uuid: str) -> InstanceRecords:
        """The cell's instances; saves send ``instance.update`` as Nova's do."""
        saves = SaveNotifier.of(self.notifier, _audit_unit(self.conf), self.clock.now)
        return InstanceRecords(self.cells[cell_uuid], self.clock, saves if saves.enabled else None)

    def cell_uuids(self) -> list[str]:
        """Every mapped cell (cell0 included), from the API DB."""
        return [cell.uuid for cell in list_cells(self.api_db)]

    def max_attempts(self) -> int:
        """``[scheduler] max_attempts`` (3 when the scheduler's options are not registered)."""
        try:
            return max(1, int(self.conf.scheduler.max_attempts))
        except (cfg.NoSuchOptError, cfg.NoSuchGroupError):
            return DEFAULT_MAX_ATTEMPTS

    def initial_filter_properties(self, chosen: SelectedHost) -> dict[str, Any]:
        """Nova's filter_properties of a first build: retry info when retries are allowed."""
        if self.max_attempts() <= 1:
            return {}
        return {"retry": {"num_attempts": 1, "hosts": [[chosen.host, chosen.node]]}}

    def free_allocations(self, uuid: str) -> None:
        try:
            self.placement.delete_allocations(uuid)
        except PlacementError:
            LOG.exception("Could not delete the allocations of %s", uuid)

    def set_error(self, records: InstanceRecords, uuid: str, exc: BaseException) -> None:
        """ERROR, no task state, fault from ``exc``."""
        try:
            records.add_fault(uuid, exc, None)  # first: a client that sees ERROR finds it
            records.update(uuid, InstanceUpdate(vm_state=VmState.ERROR.value, task_state=None))
        except InstanceNotFound:
            LOG.info("Instance %s is gone; not setting ERROR", uuid)

    def hand_over(self, uuid: str, cell_uuid: str) -> bool:
        """Take the build request of ``uuid`` and point its mapping at ``cell_uuid``, in one
        API-DB transaction. False when the build request is gone: the user deleted the server
        (the API drops the build request and the mapping together) or an orphan sweep settled
        it first. Whoever deletes the build request owns the rest of the build."""
        with self.api_db.begin() as conn:
            try:
                build_requests.delete(conn, uuid)
            except BuildRequestNotFound:
                return False
            instance_mappings.move_to_cell(conn, uuid, cell_uuid)
        return True

    def discard(self, records: InstanceRecords, uuid: str) -> None:
        """Remove the cell row of a build whose server is gone (deleted by the user while it
        was being scheduled, or settled elsewhere): allocations freed, row deleted."""
        self.free_allocations(uuid)
        try:
            records.delete_row(uuid)
        except InstanceNotFound:
            LOG.debug("Instance %s was already removed", uuid)

    def bury_in_cell0(
        self,
        instance: Instance,
        exc: BaseException,
        mappings: Sequence[Mapping[str, Any]] = (),
    ) -> None:
        """Create the instance in cell0 in ERROR with a fault (and its block device mappings,
        whose reserved volumes the API's delete gives back), then hand the build over to
        cell0; if the build request is gone meanwhile, the cell0 row goes too."""
        cell0 = self.records(CELL0_UUID)
        buried = replace(
            instance, vm_state=VmState.ERROR.value, task_state=None, host=None, node=None
        )
        try:
            cell0.create(buried, block_device_mappings=mappings)
        except sa.exc.IntegrityError:
            LOG.info("Instance %s is already in cell0", instance.uuid)
        cell0.add_fault(instance.uuid, exc, None)
        if not self.hand_over(instance.uuid, CELL0_UUID):
            self.discard(cell0, instance.uuid)

    def cast_build(
        self,
        context: CallContext,
        instance: Instance,
        chosen: SelectedHost,
        alternates: Sequence[SelectedHost],
        *,
        request_spec: Mapping[str, Any],
        filter_properties: Mapping[str, Any],
        image: Mapping[str, Any],
        admin_password: str | None,
        requested_networks: Sequence[Mapping[str, Any]] | None,
    ) -> None:
        build = BuildAndRunInstance(
            instance.uuid,
            request_spec=request_spec,
            filter_properties=filter_properties,
            requested_networks=tuple(requested_networks or ()),
            host_list=tuple(alt.primitive for alt in alternates),
            image=image,
            admin_password=admin_password,
            node=chosen.node,
        )
        self.compute.cast(context, chosen.host, build)
