"""The conductor's RPC endpoint: Nova's ComputeTaskAPI (topic ``conductor``, namespace
``compute_task``). Thin: builds a task from the typed message
(``openkeel.rpc.messages.conductor``) and runs it (openkeel.conductor.tasks).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from openkeel.conductor.context import ConductorDeps
from openkeel.conductor.tasks.build import BuildOptions, RescheduleTask, ScheduleAndBuildTask
from openkeel.conductor.tasks.live_migrate import LiveMigrateTask
from openkeel.conductor.tasks.migrate import MigrateTask
from openkeel.conductor.tasks.rebuild import RebuildTask
from openkeel.conductor.tasks.unshelve import UnshelveTask
from openkeel.rpc.clients.conductor import SERVER_VERSION
from openkeel.rpc.message import CallContext
from openkeel.rpc.messages import RpcMessage
from openkeel.rpc.messages import conductor as m


class ComputeTaskEndpoint:
    """ComputeTaskManager's methods OpenKeel serves so far."""

    rpc_version: ClassVar[str] = SERVER_VERSION
    rpc_namespace: ClassVar[str] = "compute_task"
    rpc_messages: ClassVar[Mapping[str, type[RpcMessage]]] = m.MESSAGES

    def __init__(self, deps: ConductorDeps) -> None:
        self._deps = deps

    def schedule_and_build_instances(
        self, context: CallContext, msg: m.ScheduleAndBuildInstances
    ) -> None:
        options = BuildOptions(msg.image, msg.admin_password, msg.requested_networks)
        ScheduleAndBuildTask(
            self._deps, context, msg.instance_uuids, msg.request_specs, options
        ).execute()

    def build_instances(self, context: CallContext, msg: m.BuildInstances) -> None:
        options = BuildOptions(msg.image, msg.admin_password, msg.requested_networks)
        for index, uuid in enumerate(msg.instance_uuids):
            host_list = msg.host_lists[index] if index < len(msg.host_lists) else ()
            RescheduleTask(
                self._deps, context, uuid, host_list, msg.filter_properties, msg.request_spec,
                options,
            ).execute()  # fmt: skip

    def migrate_server(self, context: CallContext, msg: m.MigrateServer) -> None:
        MigrateTask(
            self._deps, context, msg.instance_uuid, msg.flavor, msg.scheduler_hint,
            msg.request_spec, msg.clean_shutdown,
        ).execute()  # fmt: skip

    def live_migrate_instance(self, context: CallContext, msg: m.LiveMigrateInstance) -> None:
        LiveMigrateTask(
            self._deps, context, msg.instance_uuid, msg.scheduler_hint, msg.block_migration,
            msg.request_spec,
        ).execute()  # fmt: skip

    def rebuild_instance(self, context: CallContext, msg: m.RebuildInstance) -> None:
        RebuildTask(self._deps, context, msg).execute()

    def unshelve_instance(self, context: CallContext, msg: m.UnshelveInstance) -> None:
        UnshelveTask(self._deps, context, msg).execute()
