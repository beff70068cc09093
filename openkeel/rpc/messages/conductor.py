"""Messages of the conductor's compute-task API (topic ``conductor``, namespace
``compute_task``), Nova's ComputeTaskAPI names.

Sent by the API (create, cold and live migration) and by compute (reschedule of a failed
build); served by ``openkeel.conductor.endpoint``. Instances travel as uuids: the conductor reads
the build requests and instances itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from openkeel.rpc.messages import Json, RpcMessage, by_method


@dataclass(frozen=True)
class ScheduleAndBuildInstances(RpcMessage):
    """Schedule and build the servers of one create request (API -> conductor, cast)."""

    method: ClassVar[str] = "schedule_and_build_instances"
    versions: ClassVar[tuple[str, ...]] = ("1.17", "1.16")

    instance_uuids: tuple[str, ...]
    # One request spec per server (all alike but for the instance uuid).
    request_specs: tuple[Json, ...]
    image: Json = field(default_factory=dict)
    admin_password: str | None = None
    requested_networks: tuple[Json, ...] | None = None


@dataclass(frozen=True)
class BuildInstances(RpcMessage):
    """Reschedule failed builds onto their alternates (compute -> conductor, cast)."""

    method: ClassVar[str] = "build_instances"
    versions: ClassVar[tuple[str, ...]] = ("1.19", "1.10")
    since: ClassVar[dict[str, str]] = {"host_lists": "1.19"}

    instance_uuids: tuple[str, ...]
    image: Json = field(default_factory=dict)
    filter_properties: Json = field(default_factory=dict)
    admin_password: str | None = None
    requested_networks: tuple[Json, ...] | None = None
    request_spec: Json | None = None
    # Per instance, the alternates still to try (Selection documents).
    host_lists: tuple[tuple[Json, ...], ...] = ()


@dataclass(frozen=True)
class MigrateServer(RpcMessage):
    """Resize (``flavor`` given) or cold-migrate an instance (API -> conductor)."""

    method: ClassVar[str] = "migrate_server"
    versions: ClassVar[tuple[str, ...]] = ("1.20", "1.13")

    instance_uuid: str
    flavor: Json | None = None
    # ``{"host": ...}`` for a targeted cold migration.
    scheduler_hint: Json = field(default_factory=dict)
    request_spec: Json | None = None
    clean_shutdown: bool = True


@dataclass(frozen=True)
class LiveMigrateInstance(RpcMessage):
    """Live-migrate an instance, to ``scheduler_hint["host"]`` when given (API, cast)."""

    method: ClassVar[str] = "live_migrate_instance"
    versions: ClassVar[tuple[str, ...]] = ("1.15",)

    instance_uuid: str
    scheduler_hint: Json = field(default_factory=dict)
    block_migration: bool | None = None
    request_spec: Json | None = None


@dataclass(frozen=True)
class RebuildInstance(RpcMessage):
    """Rebuild an instance on its host from ``image_ref`` (API -> conductor, cast)."""

    method: ClassVar[str] = "rebuild_instance"
    versions: ClassVar[tuple[str, ...]] = ("1.25",)

    instance_uuid: str
    image_ref: str
    orig_image_ref: str
    admin_password: str | None = None
    preserve_ephemeral: bool = False
    request_spec: Json | None = None
    # Evacuation: a new host (``host`` when forced, else the scheduler's pick), its migration.
    recreate: bool = False
    host: str | None = None
    migration: Json | None = None
    target_state: str | None = None  # "stopped" (2.95+): the evacuated server ends stopped
    reimage_boot_volume: bool = False  # 2.93: reimage a volume-backed server's root volume


@dataclass(frozen=True)
class UnshelveInstance(RpcMessage):
    """Bring a shelved instance back: power on in place, or schedule an offloaded one
    (API -> conductor, cast)."""

    method: ClassVar[str] = "unshelve_instance"
    versions: ClassVar[tuple[str, ...]] = ("1.25",)

    instance_uuid: str
    request_spec: Json | None = None


MESSAGES = by_method(
    ScheduleAndBuildInstances,
    BuildInstances,
    MigrateServer,
    LiveMigrateInstance,
    RebuildInstance,
    UnshelveInstance,
)
