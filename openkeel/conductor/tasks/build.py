"""schedule_and_build_instances and build_instances (reschedule), as conductor tasks.

``ScheduleAndBuildTask.execute()``: ask the scheduler (which claims allocations) for a host
and alternates per instance; if scheduling fails, bury every instance in cell0 in ERROR with a
fault (NoValidHost: code 500 "No valid host was found. ..."); else per instance create the row
in the chosen host's cell (vm_state building, task scheduling), point the instance mapping at
that cell, delete the build request — if it is already gone the user deleted the server
meanwhile: free the allocation, delete the row, build nothing — and cast
build_and_run_instance with the alternates. ``rollback()`` of one instance: ERROR + fault in
the cell it reached (or cell0) and its allocations freed; nothing stays in BUILD.

``RescheduleTask``: a compute failed a build; claim the next alternate's allocation request
and cast the build there, or set ERROR + MaxRetriesExceeded fault when none is left.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from openkeel.clients.placement_errors import PlacementError
from openkeel.conductor.context import ConductorDeps
from openkeel.conductor.errors import MaxRetriesExceeded
from openkeel.conductor.selections import SelectedHost
from openkeel.db.cells import CELL0_UUID
from openkeel.db.engine import reader
from openkeel.db.records import ActionStart, InstanceRecords
from openkeel.db.repositories import build_requests, host_mappings, instance_mappings
from openkeel.domain.instances import Instance, InstanceUpdate
from openkeel.domain.states import TaskState, VmState
from openkeel.notifications.instance_payloads import Initiator
from openkeel.rpc.message import CallContext
from openkeel.rpc.messages.scheduler import SelectDestinations

LOG = logging.getLogger(__name__)


@dataclass
class BuildOptions:
    """What a build request asked for besides its servers and specs (image, password,
    networks), passed on to the compute host."""

    image: Mapping[str, Any] = field(default_factory=dict)
    admin_password: str | None = None
    requested_networks: Sequence[Mapping[str, Any]] | None = None


class ScheduleAndBuildTask:
    """One create request: schedule all its instances, then build each one."""

    def __init__(
        self,
        deps: ConductorDeps,
        context: CallContext,
        instance_uuids: Sequence[str],
        request_specs: Sequence[Mapping[str, Any]],
        args: BuildOptions,
    ) -> None:
        self.deps = deps
        self.context = context
        self.uuids = list(instance_uuids)
        self.specs = list(request_specs)
        self.args = args

    def execute(self) -> None:
        pending = self._pending()
        if not pending:
            return
        uuids = [b.instance_uuid for b in pending]
        try:
            host_lists = self._select(uuids)
        except Exception as exc:
            LOG.warning("Scheduling of %s failed: %s", uuids, exc)
            for index, build in enumerate(pending):
                self.deps.bury_in_cell0(build.instance, exc, build.block_device_mappings)
                self._notify_error(build.instance_uuid, self._spec_for(index), exc)
            return
        for build, host_list in zip(pending, host_lists, strict=False):
            try:
                selected = [SelectedHost.from_primitive(s) for s in host_list]
                self._build_one(build.instance, selected, build.block_device_mappings)
            except Exception as exc:
                LOG.exception("Build of %s failed in conductor", build.instance_uuid)
                self.rollback(build.instance, exc, build.block_device_mappings)

    def _notify_error(self, uuid: str, spec: Mapping[str, Any], exc: BaseException) -> None:
        """``compute_task.build_instances.error``: the server could not be scheduled (ERROR)."""
        ctx = self.context
        who = Initiator(ctx.request_id, ctx.user_id, ctx.project_id)
        spec = {**spec, "instance_uuid": uuid}
        self.deps.notifier.compute_task_error("build_instances", uuid, spec, "error", exc, who)

    def _pending(self) -> list[build_requests.BuildRequest]:
        found = []
        with reader(self.deps.api_db).connect() as conn:
            for uuid in self.uuids:
                request = build_requests.find(conn, uuid)
                if request is None:
                    LOG.info("Build request of %s is gone: server deleted before scheduling", uuid)
                else:
                    found.append(request)
        return found

    def _spec_for(self, index: int) -> Mapping[str, Any]:
        return self.specs[min(index, len(self.specs) - 1)] if self.specs else {}

    def _select(self, uuids: list[str]) -> list[list[Mapping[str, Any]]]:
        spec = {**self._spec_for(0), "num_instances": len(uuids)}
        answer = self.deps.scheduler.select_destinations(
            self.context,
            SelectDestinations(spec, tuple(uuids), return_objects=True, return_alternates=True),
        )
        assert isinstance(answer, list) and len(answer) == len(uuids), answer
        return [list(host_list) for host_list in answer]  # type: ignore[arg-type]

    def _build_one(
        self,
        instance: Instance,
        host_list: list[SelectedHost],
        mappings: Sequence[Mapping[str, Any]] = (),
    ) -> None:
        chosen, alternates = host_list[0], host_list[1:]
        cell_uuid = chosen.cell_uuid or self._cell_of(chosen.host)
        records = self.deps.records(cell_uuid)
        # Nova records the user's "create" action here, once the instance has a cell (one
        # cell transaction for both rows).
        created = records.create(
            replace(
                instance,
                host=chosen.host,
                node=chosen.node,
                vm_state=VmState.BUILDING.value,
                task_state=TaskState.SCHEDULING.value,
            ),
            action=ActionStart(
                "create", self.context.request_id, self.context.user_id, self.context.project_id
            ),
            block_device_mappings=mappings,
        )
        if not self.deps.hand_over(instance.uuid, cell_uuid):
            LOG.info("Server %s was deleted while being scheduled: cleaning up", instance.uuid)
            self.deps.discard(records, instance.uuid)
            return
        self.deps.cast_build(
            self.context,
            created,
            chosen,
            alternates,
            request_spec=chosen.fill_provider_mapping(
                self._spec_for(self.uuids.index(instance.uuid))
            ),
            filter_properties=self.deps.initial_filter_properties(chosen),
            image=self.args.image,
            admin_password=self.args.admin_password,
            requested_networks=self.args.requested_networks,
        )

    def _cell_of(self, host: str) -> str:
        with reader(self.deps.api_db).connect() as conn:
            return host_mappings.get(conn, host).cell_uuid

    def rollback(
        self, instance: Instance, exc: BaseException, mappings: Sequence[Mapping[str, Any]] = ()
    ) -> None:
        """ERROR + fault where the instance is (cell or cell0); allocations freed. A server
        deleted meanwhile (no mapping any more) only loses its allocations and cell row."""
        self.deps.free_allocations(instance.uuid)
        with reader(self.deps.api_db).connect() as conn:
            mapping = instance_mappings.find(conn, instance.uuid)
        if mapping is None:
            for cell_uuid in self.deps.cell_uuids():
                self.deps.discard(self.deps.records(cell_uuid), instance.uuid)
            return
        if mapping.cell_uuid is None:
            self.deps.bury_in_cell0(instance, exc, mappings)
            return
        self.deps.set_error(self.deps.records(mapping.cell_uuid), instance.uuid, exc)


class RescheduleTask:
    """build_instances for one instance: the next alternate, or ERROR."""

    def __init__(
        self,
        deps: ConductorDeps,
        context: CallContext,
        instance_uuid: str,
        host_list: Sequence[Mapping[str, Any]],
        filter_properties: Mapping[str, Any],
        request_spec: Mapping[str, Any] | None,
        args: BuildOptions,
    ) -> None:
        self.deps = deps
        self.context = context
        self.uuid = instance_uuid
        self.host_list = [SelectedHost.from_primitive(s) for s in host_list]
        self.filter_properties = dict(filter_properties)
        self.request_spec = request_spec or {}
        self.args = args

    def execute(self) -> None:
        with reader(self.deps.api_db).connect() as conn:
            cell_uuid = instance_mappings.get(conn, self.uuid).cell_uuid
        if cell_uuid is None:
            LOG.warning("Instance %s has no cell; nothing to reschedule", self.uuid)
            return
        records = self.deps.records(cell_uuid)
        try:
            self._reschedule(records)
        except Exception as exc:
            LOG.warning("Reschedule of %s failed: %s", self.uuid, exc)
            self.deps.free_allocations(self.uuid)
            self.deps.set_error(records, self.uuid, exc)

    def _reschedule(self, records: InstanceRecords) -> None:
        retry = dict(self.filter_properties.get("retry") or {})
        attempts = int(retry.get("num_attempts", 1)) + 1
        max_attempts = self.deps.max_attempts()
        if attempts > max_attempts:
            raise MaxRetriesExceeded(
                f"Exceeded max scheduling attempts {max_attempts} for instance {self.uuid}. "
                f"Last exception: {retry.get('exc_reason', '')}"
            )
        chosen = self._claim_next(records)
        instance = records.update(
            self.uuid,
            InstanceUpdate(host=chosen.host, node=chosen.node),
            expected_task_state=TaskState.SCHEDULING.value,
        )
        self.filter_properties["retry"] = {**retry, "num_attempts": attempts}
        self.deps.cast_build(
            self.context,
            instance,
            chosen,
            self.host_list,
            request_spec=chosen.fill_provider_mapping(self.request_spec),
            filter_properties=self.filter_properties,
            image=self.args.image,
            admin_password=self.args.admin_password,
            requested_networks=self.args.requested_networks,
        )

    def _claim_next(self, records: InstanceRecords) -> SelectedHost:
        instance = records.get(self.uuid)
        while self.host_list:
            candidate = self.host_list.pop(0)
            allocations = candidate.allocations()
            if allocations is None:
                return candidate
            try:
                self.deps.placement.claim(
                    self.uuid,
                    allocations,
                    project_id=instance.project_id,
                    user_id=instance.user_id,
                )
                return candidate
            except PlacementError as exc:
                LOG.info("Alternate %s of %s cannot be claimed: %s", candidate.host, self.uuid, exc)
        raise MaxRetriesExceeded(
            f"Exhausted all hosts available for retrying build failures for instance {self.uuid}."
        )


__all__ = ["CELL0_UUID", "BuildOptions", "RescheduleTask", "ScheduleAndBuildTask"]
