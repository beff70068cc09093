"""Messages of the compute role (topic ``compute``, server = the host), ComputeAPI 6.x names.

Every message names its instance by uuid: compute re-reads the instance from its cell DB, the
source of truth. Sent by the API (power, pause, delete, resize verification, live migration
abort), the conductor (build, prep_resize, live_migration) and compute hosts to each other (the
resize and revert chains, post live migration); served by ``openkeel.compute.endpoint``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from openkeel.rpc.messages import Json, RpcMessage, by_method

INSTANCE_ONLY_VERSIONS = ("6.0", "5.0")


@dataclass(frozen=True)
class BuildAndRunInstance(RpcMessage):
    """Spawn the instance on this host (conductor -> compute, cast)."""

    method: ClassVar[str] = "build_and_run_instance"
    versions: ClassVar[tuple[str, ...]] = ("6.0", "5.11")

    instance_uuid: str
    request_spec: Json = field(default_factory=dict)
    filter_properties: Json = field(default_factory=dict)
    requested_networks: tuple[Json, ...] = ()
    # The alternates left for a reschedule (Selection documents).
    host_list: tuple[Json, ...] = ()
    image: Json = field(default_factory=dict)
    admin_password: str | None = None
    node: str | None = None


@dataclass(frozen=True)
class InstanceMessage(RpcMessage):
    """A message that only names its instance."""

    versions: ClassVar[tuple[str, ...]] = INSTANCE_ONLY_VERSIONS

    instance_uuid: str


@dataclass(frozen=True)
class TerminateInstance(InstanceMessage):
    """Destroy the guest and delete the instance (cast)."""

    method: ClassVar[str] = "terminate_instance"


@dataclass(frozen=True)
class SoftDeleteInstance(InstanceMessage):
    """Power the guest off and mark the instance soft-deleted (cast)."""

    method: ClassVar[str] = "soft_delete_instance"


@dataclass(frozen=True)
class RestoreInstance(InstanceMessage):
    """Bring a soft-deleted instance back (cast)."""

    method: ClassVar[str] = "restore_instance"


@dataclass(frozen=True)
class StartInstance(InstanceMessage):
    """Power on (cast)."""

    method: ClassVar[str] = "start_instance"


@dataclass(frozen=True)
class StopInstance(InstanceMessage):
    """Power off (cast, or call when the sender waits)."""

    method: ClassVar[str] = "stop_instance"

    clean_shutdown: bool = True


@dataclass(frozen=True)
class PauseInstance(InstanceMessage):
    method: ClassVar[str] = "pause_instance"


@dataclass(frozen=True)
class UnpauseInstance(InstanceMessage):
    method: ClassVar[str] = "unpause_instance"


@dataclass(frozen=True)
class SuspendInstance(InstanceMessage):
    method: ClassVar[str] = "suspend_instance"


@dataclass(frozen=True)
class ResumeInstance(InstanceMessage):
    method: ClassVar[str] = "resume_instance"


@dataclass(frozen=True)
class InjectNetworkInfo(InstanceMessage):
    """Push the network info into the guest (cast)."""

    method: ClassVar[str] = "inject_network_info"


@dataclass(frozen=True)
class RefreshInstanceSecurityRules(InstanceMessage):
    """The server's security groups changed: a driver enforcing them refreshes (cast;
    decision 0077)."""

    method: ClassVar[str] = "refresh_instance_security_rules"


@dataclass(frozen=True)
class RebootInstance(InstanceMessage):
    """Reboot, ``reboot_type`` SOFT or HARD (cast)."""

    method: ClassVar[str] = "reboot_instance"

    reboot_type: str = "SOFT"


@dataclass(frozen=True)
class RebuildInstance(InstanceMessage):
    """Define the guest again from ``image_ref`` on this host (conductor -> compute, cast)."""

    method: ClassVar[str] = "rebuild_instance"
    versions: ClassVar[tuple[str, ...]] = ("6.0", "5.12")

    image_ref: str = ""
    orig_image_ref: str = ""
    admin_password: str | None = None
    preserve_ephemeral: bool = False
    # Evacuation to this host: its node, the migration record, the state to end in.
    recreate: bool = False
    node: str | None = None
    migration: Json | None = None
    target_state: str | None = None
    # 2.93: a volume-backed server's root volume is reimaged with ``image_ref`` (Nova's 6.1)
    reimage_boot_volume: bool = False


# --- rescue, admin password, crash dump (openkeel.compute.operations.rescue, guest_requests) -


@dataclass(frozen=True)
class RescueInstance(InstanceMessage):
    """Boot the guest from a rescue image, its disks attached (API, cast)."""

    method: ClassVar[str] = "rescue_instance"

    rescue_password: str | None = None
    rescue_image_ref: str | None = None
    clean_shutdown: bool = True


@dataclass(frozen=True)
class UnrescueInstance(InstanceMessage):
    """Boot the guest from its own disks again (API or the rescue_timeout task, cast)."""

    method: ClassVar[str] = "unrescue_instance"


@dataclass(frozen=True)
class SetAdminPassword(InstanceMessage):
    """Change the guest's administrator password (API, call: the answer waits for it)."""

    method: ClassVar[str] = "set_admin_password"

    new_pass: str = ""


@dataclass(frozen=True)
class TriggerCrashDump(InstanceMessage):
    """Send the guest an NMI so that its kernel dumps its memory (API, cast)."""

    method: ClassVar[str] = "trigger_crash_dump"


# --- snapshots (openkeel.compute.operations.snapshot) -------------------------------------


@dataclass(frozen=True)
class SnapshotInstance(InstanceMessage):
    """Upload the guest's root disk into the queued image ``image_id`` (API -> compute, cast)."""

    method: ClassVar[str] = "snapshot_instance"

    image_id: str = ""


@dataclass(frozen=True)
class BackupInstance(InstanceMessage):
    """A snapshot into ``image_id``, then keep only the newest ``rotation`` backups of
    ``backup_type`` of the instance (API -> compute, cast)."""

    method: ClassVar[str] = "backup_instance"

    image_id: str = ""
    backup_type: str = ""
    rotation: int = 0


# --- shelving (openkeel.compute.operations.shelve) -----------------------------------------


@dataclass(frozen=True)
class ShelveInstance(InstanceMessage):
    """Power off, snapshot into ``image_id``, SHELVED; offloaded at once when
    ``shelved_offload_time`` is 0 (API -> compute, cast)."""

    method: ClassVar[str] = "shelve_instance"

    image_id: str = ""
    clean_shutdown: bool = True


@dataclass(frozen=True)
class ShelveOffloadInstance(InstanceMessage):
    """Remove the shelved guest from this host and free its resources (cast)."""

    method: ClassVar[str] = "shelve_offload_instance"

    clean_shutdown: bool = True


@dataclass(frozen=True)
class UnshelveInstance(InstanceMessage):
    """Spawn a shelved-offloaded instance on this host from its shelved image
    (conductor -> compute, cast)."""

    method: ClassVar[str] = "unshelve_instance"

    image_id: str | None = None
    node: str | None = None
    request_spec: Json | None = None


# --- resize / cold migration (openkeel.compute.operations.resize, resize_verify) -----------


@dataclass(frozen=True)
class PrepResize(RpcMessage):
    """Destination: claim for the new flavor, then ask the source to move (conductor, cast)."""

    method: ClassVar[str] = "prep_resize"
    versions: ClassVar[tuple[str, ...]] = ("6.0",)

    instance_uuid: str
    flavor: Json
    migration: Json
    node: str | None = None
    image: Json = field(default_factory=dict)
    request_spec: Json = field(default_factory=dict)
    clean_shutdown: bool = True


@dataclass(frozen=True)
class ResizeInstance(RpcMessage):
    """Source: power off and hand the disks over (destination -> source, cast)."""

    method: ClassVar[str] = "resize_instance"
    versions: ClassVar[tuple[str, ...]] = ("6.0",)

    instance_uuid: str
    migration: Json
    image: Json = field(default_factory=dict)
    request_spec: Json = field(default_factory=dict)
    clean_shutdown: bool = True


@dataclass(frozen=True)
class FinishResize(RpcMessage):
    """Destination: define the guest with the new flavor (source -> destination, cast)."""

    method: ClassVar[str] = "finish_resize"
    versions: ClassVar[tuple[str, ...]] = ("6.0",)

    instance_uuid: str
    migration: Json
    disk_info: Json = field(default_factory=dict)


@dataclass(frozen=True)
class ConfirmResize(RpcMessage):
    """Source: delete the old guest and the migration's allocations (API, cast)."""

    method: ClassVar[str] = "confirm_resize"
    versions: ClassVar[tuple[str, ...]] = ("6.0",)

    instance_uuid: str
    migration: Json


@dataclass(frozen=True)
class RevertResize(RpcMessage):
    """Destination: destroy the new guest, then let the source restore (API, cast)."""

    method: ClassVar[str] = "revert_resize"
    versions: ClassVar[tuple[str, ...]] = ("6.0",)

    instance_uuid: str
    migration: Json
    request_spec: Json = field(default_factory=dict)


@dataclass(frozen=True)
class FinishRevertResize(RpcMessage):
    """Source: restore the old guest, flavor and allocations (destination -> source, cast)."""

    method: ClassVar[str] = "finish_revert_resize"
    versions: ClassVar[tuple[str, ...]] = ("6.0",)

    instance_uuid: str
    migration: Json


# --- live migration (openkeel.compute.operations.live_migrate) -----------------------------


@dataclass(frozen=True)
class LiveMigration(RpcMessage):
    """Source: move the running guest to ``dest`` (conductor, cast)."""

    method: ClassVar[str] = "live_migration"
    versions: ClassVar[tuple[str, ...]] = INSTANCE_ONLY_VERSIONS

    instance_uuid: str
    dest: str
    migration: Json = field(default_factory=dict)
    block_migration: bool | None = None


@dataclass(frozen=True)
class PreLiveMigration(InstanceMessage):
    """Destination: get ready to receive the guest, attaching the server's volumes with this
    host's connector before it moves (source -> destination, call)."""

    method: ClassVar[str] = "pre_live_migration"

    block_migration: bool | None = None
    migration: Json = field(default_factory=dict)


@dataclass(frozen=True)
class RollbackLiveMigrationAtDestination(InstanceMessage):
    """Destination: forget a live migration that was rolled back (source -> destination,
    cast)."""

    method: ClassVar[str] = "rollback_live_migration_at_destination"

    destroy_disks: bool = True


@dataclass(frozen=True)
class PostLiveMigrationAtDestination(InstanceMessage):
    """Destination: take the guest over (source -> destination, call)."""

    method: ClassVar[str] = "post_live_migration_at_destination"

    block_migration: bool | None = None


@dataclass(frozen=True)
class LiveMigrationAbort(InstanceMessage):
    """Source: cancel the running live migration (API, cast)."""

    method: ClassVar[str] = "live_migration_abort"

    migration_id: int


@dataclass(frozen=True)
class LiveMigrationForceComplete(InstanceMessage):
    """Source: make the live migration converge (API, cast)."""

    method: ClassVar[str] = "live_migration_force_complete"


# --- guest access (openkeel.compute.operations.console) ------------------------------------


@dataclass(frozen=True)
class GetConsoleOutput(InstanceMessage):
    """The guest's console log, its last ``tail_length`` lines when given (API, call)."""

    method: ClassVar[str] = "get_console_output"

    tail_length: int | None = None


@dataclass(frozen=True)
class GetRemoteConsole(InstanceMessage):
    """A console auth token for the guest's console; answers its access URL (API, call)."""

    method: ClassVar[str] = ""
    protocol: ClassVar[str] = ""

    console_type: str | None = None


@dataclass(frozen=True)
class GetVncConsole(GetRemoteConsole):
    method: ClassVar[str] = "get_vnc_console"
    protocol: ClassVar[str] = "vnc"


@dataclass(frozen=True)
class GetSpiceConsole(GetRemoteConsole):
    method: ClassVar[str] = "get_spice_console"
    protocol: ClassVar[str] = "spice"


@dataclass(frozen=True)
class GetSerialConsole(GetRemoteConsole):
    method: ClassVar[str] = "get_serial_console"
    protocol: ClassVar[str] = "serial"


@dataclass(frozen=True)
class GetMksConsole(GetRemoteConsole):
    method: ClassVar[str] = "get_mks_console"
    protocol: ClassVar[str] = "mks"


@dataclass(frozen=True)
class ValidateConsolePort(InstanceMessage):
    """Whether the guest's console still listens on ``port`` (console proxy, call)."""

    method: ClassVar[str] = "validate_console_port"

    port: str = ""
    console_type: str = ""


@dataclass(frozen=True)
class GetDiagnostics(InstanceMessage):
    """The driver's own diagnostics of a running guest (API before 2.48, call)."""

    method: ClassVar[str] = "get_diagnostics"


@dataclass(frozen=True)
class GetInstanceDiagnostics(InstanceMessage):
    """Standard diagnostics of a running guest (API from 2.48, call)."""

    method: ClassVar[str] = "get_instance_diagnostics"


# --- the host itself ------------------------------------------------------------------------


@dataclass(frozen=True)
class GetHostUptime(RpcMessage):
    """The host's uptime line (API os-hypervisors, call)."""

    method: ClassVar[str] = "get_host_uptime"
    versions: ClassVar[tuple[str, ...]] = INSTANCE_ONLY_VERSIONS


@dataclass(frozen=True)
class SetHostEnabled(RpcMessage):
    """Let the hypervisor accept new guests or not (API os-hosts, call)."""

    method: ClassVar[str] = "set_host_enabled"
    versions: ClassVar[tuple[str, ...]] = INSTANCE_ONLY_VERSIONS

    enabled: bool


@dataclass(frozen=True)
class HostPowerAction(RpcMessage):
    """Reboot, shut down or start up the hypervisor host (API os-hosts, call)."""

    method: ClassVar[str] = "host_power_action"
    versions: ClassVar[tuple[str, ...]] = INSTANCE_ONLY_VERSIONS

    action: str


@dataclass(frozen=True)
class HostMaintenanceMode(RpcMessage):
    """Start or end the host's maintenance window (API os-hosts, call)."""

    method: ClassVar[str] = "host_maintenance_mode"
    versions: ClassVar[tuple[str, ...]] = INSTANCE_ONLY_VERSIONS

    host_param: str
    mode: bool


# --- external events (openkeel.compute.external_events) -----------------------------------


@dataclass(frozen=True)
class ExternalEvent:
    """One event a service reported for an instance (Nova's InstanceExternalEvent)."""

    instance_uuid: str
    name: str
    status: str = "completed"
    tag: str | None = None

    @property
    def key(self) -> str:
        """Nova's event key: ``name-tag``, or the name alone."""
        return f"{self.name}-{self.tag}" if self.tag is not None else self.name


@dataclass(frozen=True)
class ExternalInstanceEvent(RpcMessage):
    """Events for instances on this host, in the order received (API, cast). ``events``
    are ExternalEvent documents (``instance_uuid``, ``name``, ``status``, ``tag``)."""

    method: ClassVar[str] = "external_instance_event"
    versions: ClassVar[tuple[str, ...]] = INSTANCE_ONLY_VERSIONS

    instance_uuids: tuple[str, ...]
    events: tuple[Json, ...]

    @classmethod
    def of(cls, events: list[ExternalEvent]) -> ExternalInstanceEvent:
        uuids = tuple(dict.fromkeys(e.instance_uuid for e in events))
        docs = tuple(
            {"instance_uuid": e.instance_uuid, "name": e.name, "status": e.status, "tag": e.tag}
            for e in events
        )
        return cls(uuids, docs)

    def typed_events(self) -> list[ExternalEvent]:
        found = []
        for doc in self.events:
            status = doc.get("status") or "completed"
            found.append(ExternalEvent(doc["instance_uuid"], doc["name"], status, doc.get("tag")))
        return found


@dataclass(frozen=True)
class AttachInterface(InstanceMessage):
    """Plug a port into the guest: a new one on ``network_id`` (with ``requested_ip``), or the
    given ``port_id``; answers the port id (API, call)."""

    method: ClassVar[str] = "attach_interface"

    network_id: str | None = None
    port_id: str | None = None
    requested_ip: str | None = None
    tag: str | None = None


@dataclass(frozen=True)
class DetachInterface(InstanceMessage):
    """Unplug the port from the guest and release it (API, cast)."""

    method: ClassVar[str] = "detach_interface"

    port_id: str = ""


@dataclass(frozen=True)
class AddFixedIp(InstanceMessage):
    """One more address from ``network_id`` on the server's port there (API, cast)."""

    method: ClassVar[str] = "add_fixed_ip_to_instance"

    network_id: str = ""


@dataclass(frozen=True)
class RemoveFixedIp(InstanceMessage):
    """Take ``address`` off the server's port holding it (API, cast)."""

    method: ClassVar[str] = "remove_fixed_ip_from_instance"

    address: str = ""


@dataclass(frozen=True)
class AttachVolume(InstanceMessage):
    """Attach the volume of the mapping ``bdm_uuid`` (already reserved on Cinder's side by the
    API) to the guest (API, cast)."""

    method: ClassVar[str] = "attach_volume"

    bdm_uuid: str = ""


@dataclass(frozen=True)
class DetachVolume(InstanceMessage):
    """Detach ``volume_id`` from the guest and delete its Cinder attachment (API, cast)."""

    method: ClassVar[str] = "detach_volume"

    volume_id: str = ""


@dataclass(frozen=True)
class SwapVolume(InstanceMessage):
    """Replace the attached ``old_volume_id`` by ``new_volume_id`` (reserved by the API as
    ``new_attachment_id``) in the guest (API, cast)."""

    method: ClassVar[str] = "swap_volume"

    old_volume_id: str = ""
    new_volume_id: str = ""
    new_attachment_id: str | None = None


@dataclass(frozen=True)
class VolumeSnapshotCreate(InstanceMessage):
    """Snapshot the attached ``volume_id`` for Cinder (os-assisted-volume-snapshots; API,
    cast). ``create_info``: Cinder's ``snapshot_id``, ``type``, ``new_file``."""

    method: ClassVar[str] = "volume_snapshot_create"

    volume_id: str = ""
    create_info: Json = field(default_factory=dict)


@dataclass(frozen=True)
class VolumeSnapshotDelete(InstanceMessage):
    """Delete ``snapshot_id`` of the attached ``volume_id`` for Cinder (API, cast)."""

    method: ClassVar[str] = "volume_snapshot_delete"

    volume_id: str = ""
    snapshot_id: str = ""
    delete_info: Json = field(default_factory=dict)


MESSAGES = by_method(
    BuildAndRunInstance, TerminateInstance, SoftDeleteInstance, RestoreInstance, StartInstance,
    StopInstance, PauseInstance, UnpauseInstance, SuspendInstance, ResumeInstance,
    InjectNetworkInfo, RefreshInstanceSecurityRules, RebootInstance, RebuildInstance, PrepResize, ResizeInstance, FinishResize, ConfirmResize,
    RevertResize, FinishRevertResize, LiveMigration, PreLiveMigration,
    RollbackLiveMigrationAtDestination, PostLiveMigrationAtDestination,
    LiveMigrationAbort, LiveMigrationForceComplete, GetConsoleOutput, GetVncConsole,
    GetSpiceConsole, GetSerialConsole, GetMksConsole, ValidateConsolePort, GetDiagnostics,
    GetInstanceDiagnostics, GetHostUptime, SetHostEnabled, HostPowerAction, HostMaintenanceMode,
    ExternalInstanceEvent, AttachInterface, DetachInterface, AddFixedIp, RemoveFixedIp, RescueInstance,
    UnrescueInstance, SetAdminPassword, TriggerCrashDump, SnapshotInstance, BackupInstance,
    ShelveInstance, ShelveOffloadInstance, UnshelveInstance, AttachVolume, DetachVolume,
    SwapVolume, VolumeSnapshotCreate, VolumeSnapshotDelete,
)  # fmt: skip
