"""The compute role's RPC endpoint (topic ``compute``, server = host): Nova's ComputeAPI names.

Thin: each method receives its typed message (``openkeel.rpc.messages.compute``) and hands over
to openkeel.compute.operations. Messages name the instance by uuid; the cell DB is the source of
truth for everything else.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from openkeel.compute import external_events, security_groups
from openkeel.compute.host import ComputeHost
from openkeel.compute.operations import (
    console,
    delete,
    diagnostics,
    fixed_ips,
    guest_requests,
    interfaces,
    power,
    rebuild,
    remote_console,
    rescue,
    resize_verify,
    shelve,
    snapshot,
    soft_delete,
    volume_changes,
    volume_swap,
    volumes,
)
from openkeel.compute.operations import live_migrate as live_ops
from openkeel.compute.operations import pause as pause_ops
from openkeel.compute.operations import resize as resize_ops
from openkeel.compute.operations.build import build_and_run
from openkeel.network.adapter import RequestedNetwork
from openkeel.rpc.clients.compute import SERVER_VERSION
from openkeel.rpc.message import CallContext
from openkeel.rpc.messages import RpcMessage
from openkeel.rpc.messages import compute as m


class ComputeEndpoint:
    """ComputeManager's RPC methods that OpenKeel serves so far."""

    rpc_version: ClassVar[str] = SERVER_VERSION
    rpc_messages: ClassVar[Mapping[str, type[RpcMessage]]] = m.MESSAGES

    def __init__(self, host: ComputeHost) -> None:
        self._host = host

    def build_and_run_instance(self, context: CallContext, msg: m.BuildAndRunInstance) -> None:
        build_and_run(self._host, context, msg)

    def terminate_instance(self, context: CallContext, msg: m.TerminateInstance) -> None:
        delete.terminate(self._host, context, msg.instance_uuid)

    def soft_delete_instance(self, context: CallContext, msg: m.SoftDeleteInstance) -> None:
        soft_delete.soft_delete(self._host, context, msg.instance_uuid)

    def restore_instance(self, context: CallContext, msg: m.RestoreInstance) -> None:
        soft_delete.restore(self._host, context, msg.instance_uuid)

    def stop_instance(self, context: CallContext, msg: m.StopInstance) -> None:
        power.stop(self._host, context, msg.instance_uuid, msg.clean_shutdown)

    def start_instance(self, context: CallContext, msg: m.StartInstance) -> None:
        power.start(self._host, context, msg.instance_uuid)

    def pause_instance(self, context: CallContext, msg: m.PauseInstance) -> None:
        pause_ops.pause(self._host, context, msg.instance_uuid)

    def unpause_instance(self, context: CallContext, msg: m.UnpauseInstance) -> None:
        pause_ops.unpause(self._host, context, msg.instance_uuid)

    def suspend_instance(self, context: CallContext, msg: m.SuspendInstance) -> None:
        pause_ops.suspend(self._host, context, msg.instance_uuid)

    def resume_instance(self, context: CallContext, msg: m.ResumeInstance) -> None:
        pause_ops.resume(self._host, context, msg.instance_uuid)

    def inject_network_info(self, context: CallContext, msg: m.InjectNetworkInfo) -> None:
        pause_ops.inject_network_info(self._host, context, msg.instance_uuid)

    def refresh_instance_security_rules(self, context: CallContext, msg: m.RefreshInstanceSecurityRules) -> None:  # fmt: skip
        security_groups.refresh_one(self._host, msg.instance_uuid)

    def reboot_instance(self, context: CallContext, msg: m.RebootInstance) -> None:
        power.reboot(self._host, context, msg.instance_uuid, msg.reboot_type)

    def rebuild_instance(self, context: CallContext, msg: m.RebuildInstance) -> None:
        rebuild.rebuild(self._host, context, msg)

    def rescue_instance(self, context: CallContext, msg: m.RescueInstance) -> None:
        rescue.rescue(self._host, context, msg)

    def unrescue_instance(self, context: CallContext, msg: m.UnrescueInstance) -> None:
        rescue.unrescue(self._host, context, msg.instance_uuid)

    def set_admin_password(self, context: CallContext, msg: m.SetAdminPassword) -> None:
        guest_requests.set_admin_password(self._host, context, msg.instance_uuid, msg.new_pass)

    def trigger_crash_dump(self, context: CallContext, msg: m.TriggerCrashDump) -> None:
        guest_requests.trigger_crash_dump(self._host, context, msg.instance_uuid)

    def snapshot_instance(self, context: CallContext, msg: m.SnapshotInstance) -> None:
        snapshot.snapshot(self._host, context, msg)

    def backup_instance(self, context: CallContext, msg: m.BackupInstance) -> None:
        snapshot.backup(self._host, context, msg)

    def shelve_instance(self, context: CallContext, msg: m.ShelveInstance) -> None:
        shelve.shelve(self._host, context, msg)

    def shelve_offload_instance(self, context: CallContext, msg: m.ShelveOffloadInstance) -> None:
        shelve.shelve_offload(self._host, context, msg)

    def unshelve_instance(self, context: CallContext, msg: m.UnshelveInstance) -> None:
        shelve.unshelve(self._host, context, msg)

    # --- resize / cold migration -------------------------------------------------------------

    def prep_resize(self, context: CallContext, msg: m.PrepResize) -> None:
        resize_ops.prep_resize(self._host, context, msg)

    def resize_instance(self, context: CallContext, msg: m.ResizeInstance) -> None:
        resize_ops.resize_instance(self._host, context, msg)

    def finish_resize(self, context: CallContext, msg: m.FinishResize) -> None:
        resize_ops.finish_resize(self._host, context, msg)

    def confirm_resize(self, context: CallContext, msg: m.ConfirmResize) -> None:
        resize_verify.confirm_resize(self._host, context, msg.instance_uuid, msg.migration)

    def revert_resize(self, context: CallContext, msg: m.RevertResize) -> None:
        resize_verify.revert_resize(
            self._host, context, msg.instance_uuid, msg.migration, msg.request_spec
        )

    def finish_revert_resize(self, context: CallContext, msg: m.FinishRevertResize) -> None:
        resize_verify.finish_revert_resize(self._host, context, msg.instance_uuid, msg.migration)

    # --- live migration ----------------------------------------------------------------------

    def live_migration(self, context: CallContext, msg: m.LiveMigration) -> None:
        live_ops.live_migration(
            self._host, context, msg.instance_uuid, msg.dest, msg.migration, msg.block_migration
        )

    def pre_live_migration(self, context: CallContext, msg: m.PreLiveMigration) -> None:
        live_ops.pre_live_migration(self._host, context, msg.instance_uuid)

    def rollback_live_migration_at_destination(
        self, context: CallContext, msg: m.RollbackLiveMigrationAtDestination
    ) -> None:
        live_ops.rollback_live_migration_at_destination(self._host, context, msg.instance_uuid)

    def post_live_migration_at_destination(
        self, context: CallContext, msg: m.PostLiveMigrationAtDestination
    ) -> None:
        live_ops.post_live_migration_at_destination(
            self._host, context, msg.instance_uuid, msg.block_migration
        )

    def live_migration_abort(self, context: CallContext, msg: m.LiveMigrationAbort) -> None:
        live_ops.live_migration_abort(self._host, context, msg.instance_uuid, msg.migration_id)

    def live_migration_force_complete(
        self, context: CallContext, msg: m.LiveMigrationForceComplete
    ) -> None:
        live_ops.live_migration_force_complete(self._host, context, msg.instance_uuid)

    # --- guest access ------------------------------------------------------------------------

    def attach_interface(self, context: CallContext, msg: m.AttachInterface) -> str:
        requested = RequestedNetwork(
            network_id=msg.network_id, address=msg.requested_ip, port_id=msg.port_id, tag=msg.tag
        )
        return interfaces.attach_interface(self._host, context, msg.instance_uuid, requested)

    def detach_interface(self, context: CallContext, msg: m.DetachInterface) -> None:
        interfaces.detach_interface(self._host, context, msg.instance_uuid, msg.port_id)

    def add_fixed_ip_to_instance(self, context: CallContext, msg: m.AddFixedIp) -> None:
        fixed_ips.add_fixed_ip(self._host, context, msg.instance_uuid, msg.network_id)

    def remove_fixed_ip_from_instance(self, context: CallContext, msg: m.RemoveFixedIp) -> None:
        fixed_ips.remove_fixed_ip(self._host, context, msg.instance_uuid, msg.address)

    def attach_volume(self, context: CallContext, msg: m.AttachVolume) -> None:
        volumes.attach_volume(self._host, context, msg.instance_uuid, msg.bdm_uuid)

    def detach_volume(self, context: CallContext, msg: m.DetachVolume) -> None:
        volumes.detach_volume(self._host, context, msg.instance_uuid, msg.volume_id)

    def swap_volume(self, context: CallContext, msg: m.SwapVolume) -> None:
        volume_swap.swap_volume(self._host, context, msg)

    def volume_snapshot_create(self, context: CallContext, msg: m.VolumeSnapshotCreate) -> None:
        info = msg.create_info if isinstance(msg.create_info, dict) else {}
        volume_changes.volume_snapshot_create(self._host, msg.instance_uuid, msg.volume_id, info)

    def volume_snapshot_delete(self, context: CallContext, msg: m.VolumeSnapshotDelete) -> None:
        info = msg.delete_info if isinstance(msg.delete_info, dict) else {}
        volume_changes.volume_snapshot_delete(self._host, msg.instance_uuid, msg.volume_id,
                                              msg.snapshot_id, info)  # fmt: skip

    def get_console_output(self, context: CallContext, msg: m.GetConsoleOutput) -> str:
        return console.console_output(self._host, msg.instance_uuid, msg.tail_length)

    def get_vnc_console(self, context: CallContext, msg: m.GetVncConsole) -> str:
        return self._remote_console(msg)

    def get_spice_console(self, context: CallContext, msg: m.GetSpiceConsole) -> str:
        return self._remote_console(msg)

    def get_serial_console(self, context: CallContext, msg: m.GetSerialConsole) -> str:
        return self._remote_console(msg)

    def get_mks_console(self, context: CallContext, msg: m.GetMksConsole) -> str:
        return self._remote_console(msg)

    def _remote_console(self, msg: m.GetRemoteConsole) -> str:
        return remote_console.get_console(
            self._host, msg.instance_uuid, msg.protocol, msg.console_type
        )

    def validate_console_port(self, context: CallContext, msg: m.ValidateConsolePort) -> bool:
        return remote_console.validate_console_port(
            self._host, msg.instance_uuid, int(msg.port), msg.console_type
        )

    def get_diagnostics(self, context: CallContext, msg: m.GetDiagnostics) -> dict[str, Any]:
        return diagnostics.diagnostics(self._host, msg.instance_uuid)

    def get_instance_diagnostics(
        self, context: CallContext, msg: m.GetInstanceDiagnostics
    ) -> dict[str, Any]:
        return diagnostics.instance_diagnostics(self._host, msg.instance_uuid)

    # --- the host and events from other services --------------------------------------------

    def get_host_uptime(self, context: CallContext, msg: m.GetHostUptime) -> str:
        return diagnostics.host_uptime(self._host)

    def set_host_enabled(self, context: CallContext, msg: m.SetHostEnabled) -> str:
        return diagnostics.set_host_enabled(self._host, msg.enabled)

    def host_power_action(self, context: CallContext, msg: m.HostPowerAction) -> str:
        return diagnostics.host_power_action(self._host, msg.action)

    def host_maintenance_mode(self, context: CallContext, msg: m.HostMaintenanceMode) -> str:
        return diagnostics.host_maintenance_mode(self._host, msg.mode)

    def external_instance_event(self, context: CallContext, msg: m.ExternalInstanceEvent) -> None:
        external_events.handle(self._host, context, msg.typed_events())
