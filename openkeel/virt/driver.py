"""The virt driver interface the compute role knows (Nova's ComputeDriver, typed and trimmed).

Compute calls these methods from its operations; it never imports a concrete driver. General
contract for every method:

* Compute guarantees: the instance's task_state was set and saved (so a crash leaves a visible
  transitional state that compute's start-up reconciliation resolves), the caller holds the
  per-instance lock, and arguments are complete value objects (openkeel.virt.model).
* The driver guarantees: it returns only when the hypervisor reached the target state (or
  raises); every state-changing method is idempotent — calling it again after a crash mid-way,
  or when the target state already holds, succeeds without a second side effect; failures are
  ``TransientDriverError`` (retry may help) or ``PermanentDriverError``; a guest that is absent
  raises ``InstanceNotFound`` except where noted (destroy, cleanup).
* Operations a driver cannot do raise ``NotSupported`` and are listed in ``unsupported``; the
  contract suite checks that both agree.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Mapping, Sequence
from typing import ClassVar

from openkeel.domain.states import TaskState
from openkeel.virt.errors import NotSupported
from openkeel.virt.model import (
    ConsoleInfo,
    Diagnostics,
    DiskTransfer,
    FlavorSpec,
    HostResources,
    ImageSpec,
    InjectedFile,
    InstanceInfo,
    InstanceRef,
    InstanceSpec,
    InventoryPolicy,
    JsonValue,
    LifecycleEvent,
    LiveMigrationProgress,
    MigrationRef,
    NetworkInterface,
    NodeInventory,
    PortSecurity,
    RebootType,
    SnapshotResult,
    SnapshotTarget,
    VolumeAttachment,
)

EventListener = Callable[[LifecycleEvent], None]
TaskStateCallback = Callable[[TaskState, TaskState | None], None]
ProgressCallback = Callable[[LiveMigrationProgress], None]

# Names of the optional operations (method names) a driver may list in ``unsupported``.
OPTIONAL_OPERATIONS: frozenset[str] = frozenset(
    {
        "pause",
        "unpause",
        "suspend",
        "resume",
        "rescue",
        "unrescue",
        "snapshot",
        "migrate_disk_and_power_off",
        "finish_migration",
        "confirm_migration",
        "finish_revert_migration",
        "live_migration",
        "live_migration_abort",
        "live_migration_force_complete",
        "post_live_migration_at_destination",
        "attach_volume",
        "detach_volume",
        "swap_volume",
        "extend_volume",
        "volume_snapshot_create",
        "volume_snapshot_delete",
        "attach_interface",
        "detach_interface",
        "get_console_output",
        "get_vnc_console",
        "get_serial_console",
        "get_diagnostics",
        "get_instance_diagnostics",
        "get_host_uptime",
        "set_host_enabled",
        "host_power_action",
        "host_maintenance_mode",
        "set_admin_password",
        "trigger_crash_dump",
    }
)


class ComputeDriver(abc.ABC):
    """A hypervisor as seen by one compute service."""

    #: Short name used in messages ("fake", "kubevirt").
    name: ClassVar[str] = "abstract"
    #: Optional operations this driver raises NotSupported for (subset of OPTIONAL_OPERATIONS);
    #: a plain attribute so a configurable driver can narrow it per instance.
    unsupported: frozenset[str] = frozenset()

    def __init__(self) -> None:
        self._listener: EventListener | None = None

    def _not_supported(self, operation: str) -> NotSupported:
        return NotSupported(operation, self.name)

    # --- host ------------------------------------------------------------------------------

    @abc.abstractmethod
    def init_host(self, host: str) -> None:
        """Connect to the hypervisor once at service start and validate settings.

        Called before any other method. May be called again after a restart: must not touch
        guests (reconciliation is compute's job, using list_instance_uuids/get_info).
        """

    def cleanup_host(self, host: str) -> None:
        """Release connections at graceful stop. Default: nothing to do."""
        return None

    @abc.abstractmethod
    def get_available_nodes(self, refresh: bool = False) -> list[str]:
        """Node names this service manages (usually one: the hypervisor hostname)."""

    @abc.abstractmethod
    def get_available_resource(self, nodename: str) -> HostResources:
        """Totals and current usage of one node for the compute_nodes record.

        Raises ``PermanentDriverError`` for a node not in get_available_nodes().
        """

    @abc.abstractmethod
    def get_inventory(self, nodename: str, policy: InventoryPolicy) -> NodeInventory:
        """Placement inventories (VCPU, MEMORY_MB, DISK_GB at least) and traits of one node.

        The driver reports raw totals; ``policy`` (operator config) supplies reserved amounts
        and allocation ratios. Pure with respect to Placement: compute does the PUTs.
        """

    # --- inventory of guests -----------------------------------------------------------------

    @abc.abstractmethod
    def list_instances(self) -> list[str]:
        """Hypervisor-side names of all guests on this host (managed by us or not)."""

    @abc.abstractmethod
    def list_instance_uuids(self) -> list[str]:
        """Nova UUIDs of the guests on this host."""

    def take_over(self, instance: InstanceSpec) -> bool:
        """Evacuation to this host: make a guest of ``instance`` that a dead host defined in
        storage both hosts share (one cluster) this host's, and start it; False when there is
        none to take over (the caller then spawns). Nothing to take over by default."""
        return False

    def host_up(self) -> bool:
        """False while the hypervisor cannot run guests (a Kubernetes Node NotReady): the
        compute service stops reporting, so it shows down. True when in doubt."""
        return True

    def list_leftover_uuids(self) -> list[str]:
        """Nova UUIDs of servers that left objects on this host other than a guest (disks,
        secrets of a guest that is gone). ``destroy`` removes them. None by default."""
        return []

    def instance_exists(self, instance: InstanceRef) -> bool:
        """True if the guest is defined on this host."""
        return instance.uuid in self.list_instance_uuids()

    @abc.abstractmethod
    def get_info(self, instance: InstanceRef, use_cache: bool = True) -> InstanceInfo:
        """Current power state; ``InstanceNotFound`` if the guest is absent."""

    # --- lifecycle ---------------------------------------------------------------------------

    @abc.abstractmethod
    def spawn(
        self,
        instance: InstanceSpec,
        *,
        admin_password: str | None = None,
        injected_files: Sequence[InjectedFile] = (),
        power_on: bool = True,
    ) -> None:
        """Define the guest from ``instance`` and start it unless ``power_on`` is False.

        Before: resources are claimed, networks allocated, volumes attached on Cinder's side,
        task_state is ``spawning``. After: get_info() reports RUNNING (or SHUTDOWN). Retry after
        a crash: if a guest with the same definition exists, converge to the wanted power state;
        ``InstanceExists`` only if it exists with a different definition.
        """

    @abc.abstractmethod
    def destroy(
        self,
        instance: InstanceRef,
        *,
        network: Sequence[NetworkInterface] = (),
        destroy_disks: bool = True,
    ) -> None:
        """Power off and remove the guest; succeeds if it is already gone (never NotFound).

        With ``destroy_disks`` False the local disks stay (resize source, evacuate).
        """

    @abc.abstractmethod
    def cleanup(
        self,
        instance: InstanceRef,
        *,
        network: Sequence[NetworkInterface] = (),
        destroy_disks: bool = True,
        destroy_vifs: bool = True,
    ) -> None:
        """Remove leftovers (disks, VIFs, secrets) of a guest already destroyed. Idempotent."""

    @abc.abstractmethod
    def reboot(self, instance: InstanceRef, reboot_type: RebootType) -> None:
        """SOFT: ask the guest to restart; HARD: reset it (also starts a stopped guest).

        After: the guest is RUNNING and a STARTED event was emitted if it had been stopped.
        """

    @abc.abstractmethod
    def power_off(self, instance: InstanceRef, timeout: int = 0, retry_interval: int = 0) -> None:
        """Stop the guest: graceful shutdown for up to ``timeout`` seconds, asking again every
        ``retry_interval`` seconds, then hard; ``timeout`` 0 means hard power off at once.
        Idempotent: an already stopped guest is fine. After: SHUTDOWN, STOPPED event."""

    @abc.abstractmethod
    def power_on(self, instance: InstanceSpec) -> None:
        """Start a stopped guest (re-plugging VIFs/volumes). Idempotent if already running."""

    def pause(self, instance: InstanceRef) -> None:
        """Freeze the guest in memory. After: PAUSED, PAUSED event. Idempotent."""
        raise self._not_supported("pause")

    def unpause(self, instance: InstanceRef) -> None:
        """Continue a paused guest. After: RUNNING, RESUMED event. Idempotent."""
        raise self._not_supported("unpause")

    def suspend(self, instance: InstanceRef) -> None:
        """Save guest memory and stop it. After: SUSPENDED, SUSPENDED event. Idempotent."""
        raise self._not_supported("suspend")

    def resume(self, instance: InstanceSpec) -> None:
        """Restore a suspended guest. After: RUNNING, RESUMED event. Idempotent."""
        raise self._not_supported("resume")

    def rescue(
        self, instance: InstanceSpec, rescue_image: ImageSpec, rescue_password: str | None
    ) -> None:
        """Boot from ``rescue_image`` with the original root disk attached second.

        After: RUNNING in rescue mode; the original definition is kept for unrescue().
        """
        raise self._not_supported("rescue")

    def unrescue(self, instance: InstanceRef) -> None:
        """Boot the original definition again. After: RUNNING. Idempotent."""
        raise self._not_supported("unrescue")

    def set_admin_password(self, instance: InstanceRef, new_password: str) -> None:
        """Change the guest administrator password (needs a guest agent)."""
        raise self._not_supported("set_admin_password")

    def trigger_crash_dump(self, instance: InstanceRef) -> None:
        """Inject an NMI so the guest OS dumps its memory."""
        raise self._not_supported("trigger_crash_dump")

    # --- images ------------------------------------------------------------------------------

    def snapshot(
        self, instance: InstanceRef, target: SnapshotTarget, update_task_state: TaskStateCallback
    ) -> SnapshotResult:
        """Copy the root disk into image ``target.image_id``.

        Calls update_task_state(IMAGE_PENDING_UPLOAD, None) then (IMAGE_UPLOADING,
        IMAGE_PENDING_UPLOAD); the guest's power state is the same after as before.
        """
        raise self._not_supported("snapshot")

    def manage_image_cache(self, image_gone: Callable[[str], bool]) -> list[str]:
        """Nova's ``manage_image_cache`` pass: remove what the hypervisor keeps for images that
        ``image_gone(image_id)`` says are deleted from the image service (a cached copy, or the
        only copy of a snapshot kept in the hypervisor's storage); the image ids removed.
        ``image_gone`` is true only when the image service says so (never on its errors).
        Drivers that keep nothing per image have nothing to do."""
        return []

    # --- cold migration / resize -------------------------------------------------------------

    def migrate_disk_and_power_off(
        self,
        instance: InstanceSpec,
        dest_host: str,
        new_flavor: FlavorSpec,
        *,
        timeout: int = 0,
        retry_interval: int = 0,
    ) -> DiskTransfer:
        """Source step: power off (as power_off) and make the disks available to ``dest_host``.

        The source guest definition stays until confirm_migration (needed for revert).
        """
        raise self._not_supported("migrate_disk_and_power_off")

    def finish_migration(
        self,
        migration: MigrationRef,
        instance: InstanceSpec,
        disks: DiskTransfer,
        *,
        resize_instance: bool,
        power_on: bool = True,
    ) -> None:
        """Destination step: define the guest with ``instance.flavor`` (the new flavor) from the
        transferred disks, growing them if ``resize_instance``; start it if ``power_on``."""
        raise self._not_supported("finish_migration")

    def confirm_migration(self, migration: MigrationRef, instance: InstanceRef) -> None:
        """Source side after confirm: delete the old guest and its disks. Idempotent."""
        raise self._not_supported("confirm_migration")

    def finish_revert_migration(
        self, migration: MigrationRef, instance: InstanceSpec, *, power_on: bool = True
    ) -> None:
        """Source side after revert: restore the original guest (old flavor), start it if
        ``power_on``. Compute has already destroyed the destination guest."""
        raise self._not_supported("finish_revert_migration")

    # --- live migration ----------------------------------------------------------------------

    def live_migration(
        self,
        instance: InstanceRef,
        dest_host: str,
        on_progress: ProgressCallback,
        *,
        block_migration: bool = False,
    ) -> None:
        """Move the running guest to ``dest_host``; returns when done (Nova's post_method
        point) and raises on failure (recover_method point). Calls ``on_progress`` at least
        once; ``MigrationAborted`` after live_migration_abort(). Emits MIGRATION_COMPLETED."""
        raise self._not_supported("live_migration")

    def post_live_migration_at_destination(self, instance: InstanceSpec) -> None:
        """Destination side after live_migration() returned on the source: the guest is
        defined and RUNNING here. Idempotent (a no-op when the hypervisor moved it itself)."""
        raise self._not_supported("post_live_migration_at_destination")

    def live_migration_abort(self, instance: InstanceRef) -> None:
        """Cancel an in-progress live migration (the guest stays on the source)."""
        raise self._not_supported("live_migration_abort")

    def live_migration_force_complete(self, instance: InstanceRef) -> None:
        """Make an in-progress live migration converge (pause or post-copy)."""
        raise self._not_supported("live_migration_force_complete")

    # --- devices -----------------------------------------------------------------------------

    def volume_connector(self) -> dict[str, JsonValue]:
        """What this hypervisor adds to the host's volume connector (os-brick's connector
        properties): nothing by default; the KubeVirt driver says ``kubevirt`` so that the
        volume service answers with the PVC to hot-plug (decision 0067)."""
        return {}

    def attach_volume(self, instance: InstanceRef, attachment: VolumeAttachment) -> None:
        """Hot-plug a volume; idempotent for the same volume_id."""
        raise self._not_supported("attach_volume")

    def detach_volume(self, instance: InstanceRef, volume_id: str) -> None:
        """Hot-unplug a volume; succeeds if it is not attached."""
        raise self._not_supported("detach_volume")

    def swap_volume(
        self, instance: InstanceRef, old: VolumeAttachment, new: VolumeAttachment, resize_to: int
    ) -> None:
        """Copy the attached volume ``old`` to ``new`` and give the guest ``new`` in its place
        at the same mountpoint (Nova's swap_volume); ``resize_to``: the new size in GiB when
        the new volume is larger, else 0. Idempotent once the guest has ``new``."""
        raise self._not_supported("swap_volume")

    def extend_volume(
        self, instance: InstanceRef, attachment: VolumeAttachment, new_size: int
    ) -> None:
        """The attached volume grew to ``new_size`` bytes on Cinder's side: let the guest see
        it (Nova's extend_volume, the ``volume-extended`` event)."""
        raise self._not_supported("extend_volume")

    def volume_snapshot_create(
        self, instance: InstanceRef, volume_id: str, create_info: Mapping[str, JsonValue]
    ) -> None:
        """Snapshot an attached file-based volume for Cinder (os-assisted-volume-snapshots):
        ``create_info`` holds Cinder's ``snapshot_id``, ``type`` and ``new_file``."""
        raise self._not_supported("volume_snapshot_create")

    def volume_snapshot_delete(
        self,
        instance: InstanceRef,
        volume_id: str,
        snapshot_id: str,
        delete_info: Mapping[str, JsonValue],
    ) -> None:
        """Delete (merge) an assisted snapshot of an attached volume for Cinder."""
        raise self._not_supported("volume_snapshot_delete")

    def attach_interface(self, instance: InstanceRef, vif: NetworkInterface) -> None:
        """Hot-plug a port; idempotent for the same port_id."""
        raise self._not_supported("attach_interface")

    def get_guest_addresses(self, instance: InstanceRef) -> dict[str, tuple[str, ...]]:
        """Addresses the hypervisor's own network gave the guest, by MAC (lower case), for
        the ports whose address it assigns (KubeVirt: the pod network, a NAD with IPAM); the
        network service's addresses are to be replaced by these. Empty when every port's
        address is the network service's (every driver but KubeVirt's)."""
        return {}

    def detach_interface(self, instance: InstanceRef, port_id: str) -> None:
        """Hot-unplug a port; succeeds if it is not attached."""
        raise self._not_supported("detach_interface")

    #: Whether the driver enforces the security groups of the servers' ports itself
    #: (``refresh_security_groups``); False: the network service does, as Neutron's agents
    #: do for libvirt, and the compute host never asks for the groups.
    enforces_security_groups: bool = False
    #: Seconds between the compute host's refreshes of every guest's security groups;
    #: negative: never (only before the first spawn and on refresh_instance_security_rules).
    security_group_refresh_interval: int = -1

    def refresh_security_groups(
        self, instance: InstanceRef, network: Sequence[NetworkInterface], security: PortSecurity
    ) -> None:
        """Enforce the security groups of the server's ports (decision 0077): called before
        the first spawn, on refresh_instance_security_rules and every
        ``security_group_refresh_interval``. Nothing by default."""
        return None

    # --- consoles and diagnostics ------------------------------------------------------------

    def get_console_output(self, instance: InstanceRef) -> str:
        """The guest serial console log."""
        raise self._not_supported("get_console_output")

    def get_vnc_console(self, instance: InstanceRef) -> ConsoleInfo:
        """Where the VNC proxy connects to for this guest."""
        raise self._not_supported("get_vnc_console")

    def get_serial_console(self, instance: InstanceRef) -> ConsoleInfo:
        """Where the serial console proxy connects to for this guest."""
        raise self._not_supported("get_serial_console")

    def get_diagnostics(self, instance: InstanceRef) -> dict[str, JsonValue]:
        """Driver-specific diagnostics of the guest (the API's answer before 2.48): a flat
        mapping of counter names to values, whatever this hypervisor reports."""
        raise self._not_supported("get_diagnostics")

    def get_instance_diagnostics(self, instance: InstanceRef) -> Diagnostics:
        """Standardised diagnostics of the guest (the API's answer from 2.48)."""
        raise self._not_supported("get_instance_diagnostics")

    # --- host --------------------------------------------------------------------------------

    def get_host_uptime(self) -> str:
        """The host's uptime as the ``uptime`` command prints it (Nova's get_host_uptime)."""
        raise self._not_supported("get_host_uptime")

    def set_host_enabled(self, enabled: bool) -> str:
        """Let the hypervisor accept new guests or not (os-hosts ``status``, up to 2.42):
        ``"enabled"`` or ``"disabled"``."""
        raise self._not_supported("set_host_enabled")

    def host_power_action(self, action: str) -> str:
        """Reboot, shut down or start the hypervisor host (os-hosts, up to 2.42); returns
        the action done."""
        raise self._not_supported("host_power_action")

    def host_maintenance_mode(self, mode: bool) -> str:
        """Start or end a maintenance window (os-hosts ``maintenance_mode``):
        ``"on_maintenance"`` or ``"off_maintenance"``."""
        raise self._not_supported("host_maintenance_mode")

    # --- events ------------------------------------------------------------------------------

    def register_event_listener(self, listener: EventListener | None) -> None:
        """Set (or clear with None) the callback that receives lifecycle events.

        Events may be delivered from any thread; the listener must not call back into the
        driver synchronously.
        """
        self._listener = listener

    def emit_event(self, event: LifecycleEvent) -> None:
        """Deliver ``event`` to the registered listener, if any."""
        listener = self._listener
        if listener is not None:
            listener(event)
