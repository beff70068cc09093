"""The compute role's RPC endpoint (topic ``compute``, server = host): Nova's ComputeAPI names.

Thin: unpacks the message arguments and hands over to openkeel.compute.operations. The
instance travels as ``Instance.to_primitive()``; only its uuid is used, the cell DB is the
source of truth for everything else.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from openkeel.compute.host import ComputeHost
from openkeel.compute.operations import delete, power, resize_verify, soft_delete
from openkeel.compute.operations import live_migrate as live_ops
from openkeel.compute.operations import pause as pause_ops
from openkeel.compute.operations import resize as resize_ops
from openkeel.compute.operations.build import BuildArgs, build_and_run
from openkeel.rpc.clients.compute import SERVER_VERSION
from openkeel.rpc.message import CallContext


def _uuid(instance: Mapping[str, Any] | str) -> str:
    return instance if isinstance(instance, str) else str(instance["uuid"])


class ComputeEndpoint:
    """ComputeManager's RPC methods that OpenKeel serves so far."""

    rpc_version: ClassVar[str] = SERVER_VERSION

    def __init__(self, host: ComputeHost) -> None:
        self._host = host

    def build_and_run_instance(
        self,
        context: CallContext,
        instance: Mapping[str, Any],
        image: Mapping[str, Any] | None = None,
        request_spec: Mapping[str, Any] | None = None,
        filter_properties: Mapping[str, Any] | None = None,
        admin_password: str | None = None,
        injected_files: Sequence[Any] | None = None,
        requested_networks: Sequence[Mapping[str, Any]] | None = None,
        security_groups: Sequence[str] | None = None,
        block_device_mapping: Sequence[Any] | None = None,
        node: str | None = None,
        limits: Mapping[str, Any] | None = None,
        host_list: Sequence[Mapping[str, Any]] | None = None,
        accel_uuids: Sequence[str] | None = None,
    ) -> None:
        args = BuildArgs(
            instance_uuid=_uuid(instance),
            request_spec=request_spec or {},
            filter_properties=filter_properties or {},
            requested_networks=tuple(requested_networks or ()),
            host_list=tuple(host_list or ()),
            image=image or {},
            admin_password=admin_password,
            node=node,
        )
        build_and_run(self._host, context, args)

    def terminate_instance(
        self, context: CallContext, instance: Mapping[str, Any], bdms: Sequence[Any] = ()
    ) -> None:
        delete.terminate(self._host, context, _uuid(instance))

    def soft_delete_instance(self, context: CallContext, instance: Mapping[str, Any]) -> None:
        soft_delete.soft_delete(self._host, context, _uuid(instance))

    def restore_instance(self, context: CallContext, instance: Mapping[str, Any]) -> None:
        soft_delete.restore(self._host, context, _uuid(instance))

    def stop_instance(
        self, context: CallContext, instance: Mapping[str, Any], clean_shutdown: bool = True
    ) -> None:
        power.stop(self._host, context, _uuid(instance), clean_shutdown)

    def start_instance(self, context: CallContext, instance: Mapping[str, Any]) -> None:
        power.start(self._host, context, _uuid(instance))

    def pause_instance(self, context: CallContext, instance: Mapping[str, Any]) -> None:
        pause_ops.pause(self._host, context, _uuid(instance))

    def unpause_instance(self, context: CallContext, instance: Mapping[str, Any]) -> None:
        pause_ops.unpause(self._host, context, _uuid(instance))

    def suspend_instance(self, context: CallContext, instance: Mapping[str, Any]) -> None:
        pause_ops.suspend(self._host, context, _uuid(instance))

    def resume_instance(self, context: CallContext, instance: Mapping[str, Any]) -> None:
        pause_ops.resume(self._host, context, _uuid(instance))

    def inject_network_info(self, context: CallContext, instance: Mapping[str, Any]) -> None:
        pause_ops.inject_network_info(self._host, context, _uuid(instance))

    def reboot_instance(
        self,
        context: CallContext,
        instance: Mapping[str, Any],
        block_device_info: Mapping[str, Any] | None = None,
        reboot_type: str = "SOFT",
    ) -> None:
        power.reboot(self._host, context, _uuid(instance), reboot_type)

    # --- resize / cold migration -------------------------------------------------------------

    def prep_resize(
        self,
        context: CallContext,
        instance: Mapping[str, Any],
        image: Mapping[str, Any] | None = None,
        flavor: Mapping[str, Any] | None = None,
        migration: Mapping[str, Any] | None = None,
        request_spec: Mapping[str, Any] | None = None,
        filter_properties: Mapping[str, Any] | None = None,
        node: str | None = None,
        clean_shutdown: bool = True,
        host_list: Sequence[Mapping[str, Any]] | None = None,
    ) -> None:
        extras = {"image": image, "request_spec": request_spec, "clean_shutdown": clean_shutdown}
        resize_ops.prep_resize(
            self._host, context, _uuid(instance), flavor or {}, migration or {}, node, extras
        )

    def resize_instance(
        self,
        context: CallContext,
        instance: Mapping[str, Any],
        migration: Mapping[str, Any],
        image: Mapping[str, Any] | None = None,
        flavor: Mapping[str, Any] | None = None,
        request_spec: Mapping[str, Any] | None = None,
        clean_shutdown: bool = True,
    ) -> None:
        extras = {"image": image, "request_spec": request_spec, "clean_shutdown": clean_shutdown}
        resize_ops.resize_instance(self._host, context, _uuid(instance), migration, extras)

    def finish_resize(
        self,
        context: CallContext,
        instance: Mapping[str, Any],
        migration: Mapping[str, Any],
        image: Mapping[str, Any] | None = None,
        disk_info: Mapping[str, Any] | None = None,
        request_spec: Mapping[str, Any] | None = None,
    ) -> None:
        resize_ops.finish_resize(self._host, context, _uuid(instance), migration, disk_info or {})

    def confirm_resize(
        self, context: CallContext, instance: Mapping[str, Any], migration: Mapping[str, Any]
    ) -> None:
        resize_verify.confirm_resize(self._host, context, _uuid(instance), migration)

    def revert_resize(
        self,
        context: CallContext,
        instance: Mapping[str, Any],
        migration: Mapping[str, Any],
        request_spec: Mapping[str, Any] | None = None,
    ) -> None:
        resize_verify.revert_resize(
            self._host, context, _uuid(instance), migration, request_spec or {}
        )

    def finish_revert_resize(
        self,
        context: CallContext,
        instance: Mapping[str, Any],
        migration: Mapping[str, Any],
        request_spec: Mapping[str, Any] | None = None,
    ) -> None:
        resize_verify.finish_revert_resize(self._host, context, _uuid(instance), migration)

    # --- live migration ----------------------------------------------------------------------

    def live_migration(
        self,
        context: CallContext,
        instance: Mapping[str, Any],
        dest: str,
        block_migration: bool | None = None,
        migration: Mapping[str, Any] | None = None,
        migrate_data: Mapping[str, Any] | None = None,
    ) -> None:
        live_ops.live_migration(
            self._host, context, _uuid(instance), dest, migration or {}, block_migration
        )

    def post_live_migration_at_destination(
        self, context: CallContext, instance: Mapping[str, Any], block_migration: bool | None = None
    ) -> None:
        live_ops.post_live_migration_at_destination(
            self._host, context, _uuid(instance), block_migration
        )

    def live_migration_abort(
        self, context: CallContext, instance: Mapping[str, Any], migration_id: int
    ) -> None:
        live_ops.live_migration_abort(self._host, context, _uuid(instance), migration_id)

    def live_migration_force_complete(
        self, context: CallContext, instance: Mapping[str, Any]
    ) -> None:
        live_ops.live_migration_force_complete(self._host, context, _uuid(instance))
