"""Client of the compute role (topic ``compute``, server = the instance's host), ComputeAPI 6.x.

Instance-scoped methods go to ``instance.host`` unless a host is given, as in Nova.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from openkeel.rpc import errors
from openkeel.rpc.client import RpcClient
from openkeel.rpc.clients.base import Payload, RoleRpcClient
from openkeel.rpc.message import CallContext

SERVER_VERSION = "6.5"

# [upgrade_levels] compute release aliases.
RELEASE_ALIASES: Mapping[str, str] = {
    "queens": "5.0",
    "rocky": "5.0",
    "stein": "5.1",
    "train": "5.3",
    "ussuri": "5.11",
    "victoria": "5.12",
    "wallaby": "6.0",
    "xena": "6.0",
    "yoga": "6.0",
    "zed": "6.1",
    "antelope": "6.2",
    "bobcat": "6.2",
    "caracal": "6.3",
    "dalmatian": "6.3",
    "epoxy": "6.4",
    "flamingo": "6.4",
    "gazpacho": "6.5",
    "hibiscus": "6.5",
}


class InstancePayload(Protocol):
    """What the compute client needs from an instance: its host and its wire form."""

    @property
    def host(self) -> str | None: ...

    def to_primitive(self) -> object: ...


class ComputeRpcClient(RoleRpcClient):
    """Talks to the nova-compute-like service of one host."""

    topic = "compute"
    base_version = "6.0"
    aliases = RELEASE_ALIASES

    def build_and_run_instance(
        self,
        context: CallContext,
        instance: InstancePayload,
        host: str,
        image: Payload,
        request_spec: Payload,
        filter_properties: Payload,
        *,
        admin_password: str | None = None,
        injected_files: Sequence[Payload] | None = None,
        requested_networks: Sequence[Payload] | None = None,
        security_groups: Sequence[str] | None = None,
        block_device_mapping: Sequence[Payload] | None = None,
        node: str | None = None,
        limits: Payload | None = None,
        host_list: Sequence[Payload] | None = None,
        accel_uuids: Sequence[str] | None = None,
    ) -> None:
        """Spawn ``instance`` on ``host`` (cast)."""
        version = self.pick_version("build_and_run_instance", "6.0", "5.11")
        self._to(host, version).cast(
            context,
            "build_and_run_instance",
            instance=instance,
            image=image,
            request_spec=request_spec,
            filter_properties=filter_properties,
            admin_password=admin_password,
            injected_files=injected_files,
            requested_networks=requested_networks,
            security_groups=security_groups,
            block_device_mapping=block_device_mapping,
            node=node,
            limits=limits,
            host_list=host_list,
            accel_uuids=accel_uuids,
        )

    def terminate_instance(
        self, context: CallContext, instance: InstancePayload, bdms: Sequence[Payload]
    ) -> None:
        """Destroy ``instance`` on its host (cast)."""
        version = self.pick_version("terminate_instance", "6.0", "5.0")
        self._to(_host_of(instance), version).cast(
            context, "terminate_instance", instance=instance, bdms=list(bdms)
        )

    def soft_delete_instance(self, context: CallContext, instance: InstancePayload) -> None:
        """Soft-delete ``instance`` on its host (cast; reclaim_instance_interval > 0)."""
        version = self.pick_version("soft_delete_instance", "6.0", "5.0")
        self._to(_host_of(instance), version).cast(
            context, "soft_delete_instance", instance=instance
        )

    def restore_instance(self, context: CallContext, instance: InstancePayload) -> None:
        """Restore a soft-deleted ``instance`` on its host (cast)."""
        version = self.pick_version("restore_instance", "6.0", "5.0")
        self._to(_host_of(instance), version).cast(context, "restore_instance", instance=instance)

    def stop_instance(
        self,
        context: CallContext,
        instance: InstancePayload,
        *,
        do_cast: bool = True,
        clean_shutdown: bool = True,
    ) -> None:
        """Power ``instance`` off (cast, or call when ``do_cast`` is false)."""
        version = self.pick_version("stop_instance", "6.0", "5.0")
        rpc = self._to(_host_of(instance), version)
        send = rpc.cast if do_cast else rpc.call
        send(context, "stop_instance", instance=instance, clean_shutdown=clean_shutdown)

    def start_instance(self, context: CallContext, instance: InstancePayload) -> None:
        """Power ``instance`` on (cast)."""
        version = self.pick_version("start_instance", "6.0", "5.0")
        self._to(_host_of(instance), version).cast(context, "start_instance", instance=instance)

    def pause_instance(self, context: CallContext, instance: InstancePayload) -> None:
        """Pause ``instance`` (cast)."""
        self._instance_cast(context, "pause_instance", instance)

    def unpause_instance(self, context: CallContext, instance: InstancePayload) -> None:
        """Unpause ``instance`` (cast)."""
        self._instance_cast(context, "unpause_instance", instance)

    def suspend_instance(self, context: CallContext, instance: InstancePayload) -> None:
        """Suspend ``instance`` (cast)."""
        self._instance_cast(context, "suspend_instance", instance)

    def resume_instance(self, context: CallContext, instance: InstancePayload) -> None:
        """Resume a suspended ``instance`` (cast)."""
        self._instance_cast(context, "resume_instance", instance)

    def inject_network_info(self, context: CallContext, instance: InstancePayload) -> None:
        """Push the network info into ``instance``'s guest (cast)."""
        self._instance_cast(context, "inject_network_info", instance)

    def _instance_cast(self, context: CallContext, method: str, instance: InstancePayload) -> None:
        """Cast ``method(instance=...)`` to the instance's host (6.0, or 5.0 when capped)."""
        version = self.pick_version(method, "6.0", "5.0")
        self._to(_host_of(instance), version).cast(context, method, instance=instance)

    def reboot_instance(
        self,
        context: CallContext,
        instance: InstancePayload,
        block_device_info: Payload | None,
        reboot_type: str,
    ) -> None:
        """Reboot ``instance`` (``reboot_type`` SOFT or HARD) (cast)."""
        version = self.pick_version("reboot_instance", "6.0", "5.0")
        self._to(_host_of(instance), version).cast(
            context,
            "reboot_instance",
            instance=instance,
            block_device_info=block_device_info,
            reboot_type=reboot_type,
        )

    # --- resize / cold migration (openkeel.compute.operations.resize) -----------------------

    def prep_resize(
        self,
        context: CallContext,
        instance: InstancePayload,
        image: Payload,
        flavor: Payload,
        host: str,
        migration: Payload,
        request_spec: Payload,
        filter_properties: Payload,
        node: str | None,
        clean_shutdown: bool = True,
        host_list: Sequence[Payload] | None = None,
    ) -> None:
        """Destination: claim for the new flavor, then ask the source to resize (cast)."""
        version = self.pick_version("prep_resize", "6.0")
        self._to(host, version).cast(
            context, "prep_resize", instance=instance, image=image, flavor=flavor,
            migration=migration, request_spec=request_spec, filter_properties=filter_properties,
            node=node, clean_shutdown=clean_shutdown, host_list=list(host_list or []),
        )  # fmt: skip

    def resize_instance(
        self,
        context: CallContext,
        instance: InstancePayload,
        migration: Payload,
        image: Payload,
        flavor: Payload,
        request_spec: Payload,
        clean_shutdown: bool = True,
    ) -> None:
        """Source (``instance.host``): power off and hand the disks over (cast)."""
        version = self.pick_version("resize_instance", "6.0")
        self._to(_host_of(instance), version).cast(
            context, "resize_instance", instance=instance, migration=migration, image=image,
            flavor=flavor, request_spec=request_spec, clean_shutdown=clean_shutdown,
        )  # fmt: skip

    def finish_resize(
        self,
        context: CallContext,
        instance: InstancePayload,
        migration: Payload,
        image: Payload,
        disk_info: Payload,
        host: str,
        request_spec: Payload,
    ) -> None:
        """Destination: define the guest with the new flavor (cast)."""
        version = self.pick_version("finish_resize", "6.0")
        self._to(host, version).cast(
            context, "finish_resize", instance=instance, migration=migration, image=image,
            disk_info=disk_info, request_spec=request_spec,
        )  # fmt: skip

    def confirm_resize(
        self,
        context: CallContext,
        instance: InstancePayload,
        migration: Payload,
        host: str,
        cast: bool = True,
    ) -> None:
        """Source: delete the old guest and the migration's allocations."""
        version = self.pick_version("confirm_resize", "6.0")
        rpc = self._to(host, version)
        send = rpc.cast if cast else rpc.call
        send(context, "confirm_resize", instance=instance, migration=migration)

    def revert_resize(
        self,
        context: CallContext,
        instance: InstancePayload,
        migration: Payload,
        host: str,
        request_spec: Payload,
    ) -> None:
        """Destination: destroy the new guest, then let the source restore the old (cast)."""
        version = self.pick_version("revert_resize", "6.0")
        self._to(host, version).cast(
            context, "revert_resize", instance=instance, migration=migration,
            request_spec=request_spec,
        )  # fmt: skip

    def finish_revert_resize(
        self,
        context: CallContext,
        instance: InstancePayload,
        migration: Payload,
        host: str,
        request_spec: Payload,
    ) -> None:
        """Source: restore the old guest, flavor and allocations (cast)."""
        version = self.pick_version("finish_revert_resize", "6.0")
        self._to(host, version).cast(
            context, "finish_revert_resize", instance=instance, migration=migration,
            request_spec=request_spec,
        )  # fmt: skip

    # --- live migration (openkeel.compute.operations.live_migrate) ----------------------------

    def live_migration(
        self,
        context: CallContext,
        instance: InstancePayload,
        dest: str,
        block_migration: bool | None,
        host: str,
        migration: Payload,
        migrate_data: Payload | None = None,
    ) -> None:
        """Source ``host``: move the running guest to ``dest`` (cast)."""
        version = self.pick_version("live_migration", "6.0", "5.0")
        self._to(host, version).cast(
            context, "live_migration", instance=instance, dest=dest,
            block_migration=block_migration, migrate_data=migrate_data, migration=migration,
        )  # fmt: skip

    def post_live_migration_at_destination(
        self, context: CallContext, instance: InstancePayload, block_migration: bool | None,
        host: str,
    ) -> None:  # fmt: skip
        """Destination ``host``: take the guest over (call)."""
        version = self.pick_version("post_live_migration_at_destination", "6.0", "5.0")
        self.rpc.prepare(server=host, version=version, timeout=self.long_timeout).call(
            context, "post_live_migration_at_destination", instance=instance,
            block_migration=block_migration,
        )  # fmt: skip

    def live_migration_abort(
        self, context: CallContext, instance: InstancePayload, migration_id: int
    ) -> None:
        """Source (``instance.host``): cancel the running live migration (cast)."""
        version = self.pick_version("live_migration_abort", "6.0", "5.0")
        self._to(_host_of(instance), version).cast(
            context, "live_migration_abort", instance=instance, migration_id=migration_id
        )

    def live_migration_force_complete(
        self, context: CallContext, instance: InstancePayload, source_compute: str | None
    ) -> None:
        """Source (the migration's, else ``instance.host``): make it converge (cast)."""
        version = self.pick_version("live_migration_force_complete", "6.0", "5.0")
        host = source_compute or _host_of(instance)
        self._to(host, version).cast(context, "live_migration_force_complete", instance=instance)

    def _to(self, host: str, version: str) -> RpcClient:
        return self.rpc.prepare(server=host, version=version)


def _host_of(instance: InstancePayload) -> str:
    if not instance.host:
        raise errors.InvalidTarget("No compute host specified")
    return instance.host
