"""Client of the conductor role (topic ``conductor``): Nova's ComputeTaskAPI methods.

They live in the ``compute_task`` namespace of the conductor topic, as in Nova.
"""

from __future__ import annotations

from collections.abc import Sequence

from openkeel.rpc.clients.base import Payload, RoleRpcClient
from openkeel.rpc.message import CallContext

SERVER_VERSION = "1.26"  # ComputeTaskManager


class ConductorRpcClient(RoleRpcClient):
    """Talks to any conductor."""

    topic = "conductor"
    namespace = "compute_task"
    base_version = "1.0"

    def schedule_and_build_instances(
        self,
        context: CallContext,
        build_requests: Sequence[Payload],
        request_specs: Sequence[Payload],
        image: Payload,
        admin_password: str | None,
        injected_files: Sequence[Payload],
        requested_networks: Sequence[Payload] | None,
        block_device_mapping: Sequence[Payload],
        tags: Sequence[Payload] | None = None,
    ) -> None:
        """Schedule and build the servers of one create request (cast)."""
        version = self.pick_version("schedule_and_build_instances", "1.17", "1.16")
        args: dict[str, object] = {
            "build_requests": list(build_requests),
            "request_specs": list(request_specs),
            "image": image,
            "admin_password": admin_password,
            "injected_files": list(injected_files),
            "requested_networks": None if requested_networks is None else list(requested_networks),
            "block_device_mapping": list(block_device_mapping),
        }
        if version == "1.17":
            args["tags"] = None if tags is None else list(tags)
        self.rpc.prepare(version=version).cast(context, "schedule_and_build_instances", **args)

    def build_instances(
        self,
        context: CallContext,
        instances: Sequence[Payload],
        image: Payload,
        filter_properties: Payload,
        admin_password: str | None,
        injected_files: Sequence[Payload],
        requested_networks: Sequence[Payload] | None,
        security_groups: Sequence[str],
        block_device_mapping: Sequence[Payload],
        legacy_bdm: bool = True,
        request_spec: Payload | None = None,
        host_lists: Sequence[Sequence[Payload]] | None = None,
    ) -> None:
        """Reschedule failed builds onto their alternates (cast; compute calls it)."""
        version = self.pick_version("build_instances", "1.19", "1.10")
        args: dict[str, object] = {
            "instances": list(instances),
            "image": image,
            "filter_properties": filter_properties,
            "admin_password": admin_password,
            "injected_files": list(injected_files),
            "requested_networks": None if requested_networks is None else list(requested_networks),
            "security_groups": list(security_groups),
            "block_device_mapping": list(block_device_mapping),
            "legacy_bdm": legacy_bdm,
            "request_spec": request_spec,
        }
        if version == "1.19":
            args["host_lists"] = None if host_lists is None else [list(h) for h in host_lists]
        self.rpc.prepare(version=version).cast(context, "build_instances", **args)

    def migrate_server(
        self,
        context: CallContext,
        instance: Payload,
        scheduler_hint: Payload,
        live: bool,
        rebuild: bool,
        flavor: Payload | None,
        block_migration: bool | None,
        disk_over_commit: bool | None,
        reservations: Sequence[str] | None = None,
        clean_shutdown: bool = True,
        request_spec: Payload | None = None,
        host_list: Sequence[Payload] | None = None,
        do_cast: bool = False,
    ) -> None:
        """Resize or cold-migrate ``instance`` (call, or cast with ``do_cast``)."""
        version = self.pick_version("migrate_server", "1.20", "1.13")
        args: dict[str, object] = {
            "instance": instance,
            "scheduler_hint": scheduler_hint,
            "live": live,
            "rebuild": rebuild,
            "flavor": flavor,
            "block_migration": block_migration,
            "disk_over_commit": disk_over_commit,
            "reservations": reservations,
            "clean_shutdown": clean_shutdown,
            "request_spec": request_spec,
        }
        if version == "1.20":
            args["host_list"] = None if host_list is None else list(host_list)
        rpc = self.rpc.prepare(version=version, timeout=self.long_timeout)
        (rpc.cast if do_cast else rpc.call)(context, "migrate_server", **args)

    def live_migrate_instance(
        self,
        context: CallContext,
        instance: Payload,
        scheduler_hint: Payload,
        block_migration: bool | None,
        disk_over_commit: bool | None,
        request_spec: Payload | None,
    ) -> None:
        """Live-migrate ``instance`` (to ``scheduler_hint["host"]`` when given; cast)."""
        version = self.pick_version("live_migrate_instance", "1.15")
        self.rpc.prepare(version=version).cast(
            context, "live_migrate_instance", instance=instance, scheduler_hint=scheduler_hint,
            block_migration=block_migration, disk_over_commit=disk_over_commit,
            request_spec=request_spec,
        )  # fmt: skip
