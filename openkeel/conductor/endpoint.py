"""The conductor's RPC endpoint: Nova's ComputeTaskAPI (topic ``conductor``, namespace
``compute_task``). Thin: builds a task from the message and runs it (openkeel.conductor.tasks).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from openkeel.conductor.context import ConductorDeps
from openkeel.conductor.tasks.build import BuildArgs, RescheduleTask, ScheduleAndBuildTask
from openkeel.conductor.tasks.live_migrate import LiveMigrateTask
from openkeel.conductor.tasks.migrate import MigrateTask
from openkeel.rpc.clients.conductor import SERVER_VERSION
from openkeel.rpc.message import CallContext


class ComputeTaskEndpoint:
    """ComputeTaskManager's methods OpenKeel serves so far."""

    rpc_version: ClassVar[str] = SERVER_VERSION
    rpc_namespace: ClassVar[str] = "compute_task"

    def __init__(self, deps: ConductorDeps) -> None:
        self._deps = deps

    def schedule_and_build_instances(
        self,
        context: CallContext,
        build_requests: Sequence[Mapping[str, Any]],
        request_specs: Sequence[Mapping[str, Any]],
        image: Mapping[str, Any] | None = None,
        admin_password: str | None = None,
        injected_files: Sequence[Any] | None = None,
        requested_networks: Sequence[Mapping[str, Any]] | None = None,
        block_device_mapping: Sequence[Any] | None = None,
        tags: Sequence[Any] | None = None,
    ) -> None:
        args = BuildArgs(image or {}, admin_password, requested_networks)
        ScheduleAndBuildTask(self._deps, context, build_requests, request_specs, args).execute()

    def build_instances(
        self,
        context: CallContext,
        instances: Sequence[Mapping[str, Any]],
        image: Mapping[str, Any] | None = None,
        filter_properties: Mapping[str, Any] | None = None,
        admin_password: str | None = None,
        injected_files: Sequence[Any] | None = None,
        requested_networks: Sequence[Mapping[str, Any]] | None = None,
        security_groups: Sequence[str] | None = None,
        block_device_mapping: Sequence[Any] | None = None,
        legacy_bdm: bool = True,
        request_spec: Mapping[str, Any] | None = None,
        host_lists: Sequence[Sequence[Mapping[str, Any]]] | None = None,
    ) -> None:
        args = BuildArgs(image or {}, admin_password, requested_networks)
        lists = list(host_lists or [])
        for index, instance in enumerate(instances):
            host_list = lists[index] if index < len(lists) else []
            RescheduleTask(
                self._deps, context, instance, host_list, filter_properties or {},
                request_spec, args,
            ).execute()  # fmt: skip

    def migrate_server(
        self,
        context: CallContext,
        instance: Mapping[str, Any],
        scheduler_hint: Mapping[str, Any] | None = None,
        live: bool = False,
        rebuild: bool = False,
        flavor: Mapping[str, Any] | None = None,
        block_migration: bool | None = None,
        disk_over_commit: bool | None = None,
        reservations: Sequence[str] | None = None,
        clean_shutdown: bool = True,
        request_spec: Mapping[str, Any] | None = None,
        host_list: Sequence[Mapping[str, Any]] | None = None,
    ) -> None:
        if live or rebuild:
            raise NotImplementedError("Only cold migrations are served by migrate_server")
        MigrateTask(
            self._deps, context, instance, flavor, scheduler_hint, request_spec, clean_shutdown
        ).execute()

    def live_migrate_instance(
        self,
        context: CallContext,
        instance: Mapping[str, Any],
        scheduler_hint: Mapping[str, Any] | None = None,
        block_migration: bool | None = None,
        disk_over_commit: bool | None = None,
        request_spec: Mapping[str, Any] | None = None,
    ) -> None:
        LiveMigrateTask(
            self._deps, context, instance, scheduler_hint, block_migration, request_spec
        ).execute()
