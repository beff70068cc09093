"""A simulated hypervisor: in-memory guests, configurable delays, injected failures, events.

Used by functional tests and the all-in-one without KubeVirt (``compute_driver = fake``). One
FakeDriver is one compute host; it is thread-safe (one lock around the guest table, events and
delays outside it). Delays go through an injectable ``sleep`` so tests never really wait.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import socket
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from openkeel.domain.states import PowerState, TaskState
from openkeel.virt import errors, fake_consoles
from openkeel.virt.config_drive import write_drive
from openkeel.virt.driver import ComputeDriver, ProgressCallback, TaskStateCallback
from openkeel.virt.fake_config import FakeDriverConfig, InjectedFailure
from openkeel.virt.model import (
    ConsoleInfo,
    CpuDiagnostics,
    Diagnostics,
    DiskDiagnostics,
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
    LifecycleTransition,
    LiveMigrationProgress,
    MigrationRef,
    NetworkInterface,
    NicDiagnostics,
    NodeInventory,
    RebootType,
    SnapshotResult,
    SnapshotTarget,
    VolumeAttachment,
)
from openkeel.virt.uptime import uptime_line

_T = LifecycleTransition


SIMULATED_DISK_BYTES = 64 * 1024


def simulated_disk(spec: InstanceSpec, image_id: str) -> bytes:
    """The simulated guest's root disk as a snapshot sees it: a small raw disk whose first
    lines name the server, the image it booted from and the snapshot, then deterministic
    filler, so two snapshots of one server into one image id are byte-identical."""
    root = spec.root_volume
    if root is not None:
        source = f"volume {root.volume_id}"
    else:
        source = spec.image.image_id if spec.image is not None else "volume"
    header = (
        f"OPENKEEL SIMULATED DISK\nserver {spec.uuid}\nbooted from {source}\nsnapshot {image_id}\n"
    ).encode()
    seed = hashlib.sha256(header).digest()
    filler = (seed * (SIMULATED_DISK_BYTES // len(seed) + 1))[: SIMULATED_DISK_BYTES - len(header)]
    return header + filler


def _device_path(attachment: VolumeAttachment) -> str | None:
    data = attachment.connection_info.get("data")
    path = data.get("device_path") if isinstance(data, dict) else None
    return path if isinstance(path, str) else None


def _copy_volume_data(old: VolumeAttachment, new: VolumeAttachment) -> None:
    """What libvirt's block copy does for a swap: the guest's disk onto the new volume (for
    volumes that are local files, as the embedded volume service's)."""
    source, target = _device_path(old), _device_path(new)
    if source is None or target is None or not os.path.exists(source):
        return
    with open(source, "rb") as src, open(target, "r+b" if os.path.exists(target) else "wb") as out:
        size = os.fstat(src.fileno()).st_size
        offset = 0
        while offset < size:  # data extents only: a sparse volume stays sparse
            try:
                offset = os.lseek(src.fileno(), offset, os.SEEK_DATA)
            except OSError:  # no data past offset
                break
            end = os.lseek(src.fileno(), offset, os.SEEK_HOLE)
            out.seek(offset)
            out.write(os.pread(src.fileno(), end - offset, offset))
            offset = end


def _boot_volumes(spec: InstanceSpec) -> dict[str, VolumeAttachment]:
    """The volumes a guest is created with (the root one when volume-backed), plugged in as
    hot-plugged ones are."""
    return {
        d.volume_id: VolumeAttachment(
            d.volume_id, d.device_name or "", d.connection_info, d.disk_bus, d.device_type, d.tag
        )
        for d in spec.block_devices
        if d.destination_type == "volume" and d.volume_id
    }


@dataclass
class _Guest:
    spec: InstanceSpec
    state: PowerState
    rescued: bool = False
    previous_spec: InstanceSpec | None = None  # kept for revert after a same-host resize
    migrating: bool = False
    abort_requested: bool = False
    volumes: dict[str, VolumeAttachment] = field(default_factory=dict)
    volume_sizes: dict[str, int] = field(default_factory=dict)  # extend_volume's new sizes
    volume_snapshots: dict[str, list[str]] = field(default_factory=dict)  # assisted ones
    ports: dict[str, NetworkInterface] = field(default_factory=dict)
    log: list[str] = field(default_factory=list)
    booted_at: datetime | None = None


def _boot_log(spec: InstanceSpec) -> list[str]:
    """What the simulated guest writes to its console each time it boots."""
    flavor = spec.flavor
    return [
        f"Booting {spec.display_name or spec.uuid} ({flavor.vcpus} vCPU, "
        f"{flavor.memory_mb} MiB RAM)",
        "Mounting the root filesystem",
        "Starting network: eth0 up",
        "Starting cloud-init: done",
        "login:",
    ]


_STATE_EVENTS = {
    PowerState.RUNNING: _T.STARTED,
    PowerState.SHUTDOWN: _T.STOPPED,
    PowerState.PAUSED: _T.PAUSED,
    PowerState.SUSPENDED: _T.SUSPENDED,
}


class FakeDriver(ComputeDriver):
    """In-memory ComputeDriver; see FakeDriverConfig for knobs."""

    name = "fake"

    def __init__(
        self,
        config: FakeDriverConfig | None = None,
        *,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        super().__init__()
        self.config = config or FakeDriverConfig()
        # No maintenance window in the simulation either, as none in Nova's real drivers.
        self.unsupported = self.config.unsupported | {"host_maintenance_mode"}
        self._sleep = sleep
        self._clock = clock
        self._lock = threading.RLock()
        self._guests: dict[str, _Guest] = {}
        self._failures = {f: f.times for f in self.config.failures}
        self.host: str | None = None
        self._host_started_at = clock()
        self.host_enabled = True
        self.host_powered_off = False
        self.consoles = fake_consoles.GuestConsoles()

    # --- simulation machinery ----------------------------------------------------------------

    def _enter(self, operation: str, uuid: str | None = None) -> None:
        """Apply support check, delay and injected failures for one call."""
        if operation in self.unsupported:
            raise self._not_supported(operation)
        delay = self.config.delays.get(operation, 0.0)
        if delay > 0:
            self._sleep(delay)
        if operation == "spawn" and uuid in self.config.fail_spawn_for:
            raise errors.PermanentDriverError(f"Injected spawn failure for {uuid}")
        with self._lock:
            for failure, left in self._failures.items():
                if failure.operation != operation or left == 0:
                    continue
                if failure.instance_uuid not in (None, uuid):
                    continue
                if left is not None:
                    self._failures[failure] = left - 1
                kind = (
                    errors.TransientDriverError
                    if failure.transient
                    else errors.PermanentDriverError
                )
                raise kind(f"Injected {operation} failure for {uuid}")

    def _guest(self, uuid: str) -> _Guest:
        guest = self._guests.get(uuid)
        if guest is None:
            raise errors.InstanceNotFound(uuid)
        return guest

    def _transition(
        self, uuid: str, operation: str, allowed: set[PowerState], to: PowerState
    ) -> None:
        """Move a guest to ``to`` (no-op if already there) and emit the matching event."""
        with self._lock:
            guest = self._guest(uuid)
            if guest.state == to:
                return
            if guest.state not in allowed:
                raise errors.InvalidGuestState(uuid, operation, guest.state.name.lower())
            before, guest.state = guest.state, to
            if before in (PowerState.SHUTDOWN, PowerState.CRASHED):
                guest.booted_at = self._clock()
                guest.log.extend(_boot_log(guest.spec))
        self._emit(
            uuid,
            _T.RESUMED
            if to == PowerState.RUNNING and before in _PAUSED_LIKE
            else _STATE_EVENTS[to],
        )

    def _emit(self, uuid: str, transition: LifecycleTransition) -> None:
        self.emit_event(LifecycleEvent(uuid, transition, self._clock()))

    # --- host ------------------------------------------------------------------------------

    def init_host(self, host: str) -> None:
        self.host = host
        # The simulated hypervisor boots with its host: its uptime counts from here.
        self._host_started_at = self._clock()

    def cleanup_host(self, host: str) -> None:
        self.consoles.close()

    def get_host_uptime(self) -> str:
        self._enter("get_host_uptime")
        # The simulated hypervisor runs on this machine: its load is this machine's.
        return uptime_line(self._clock(), self._host_started_at, load=os.getloadavg())

    def set_host_enabled(self, enabled: bool) -> str:
        """Recorded in ``host_enabled`` (the simulation places guests regardless, as the
        scheduler decides by the service's status, not this flag)."""
        self._enter("set_host_enabled")
        self.host_enabled = enabled
        return "enabled" if enabled else "disabled"

    def host_power_action(self, action: str) -> str:
        """A reboot or start-up restarts the simulated hypervisor (its uptime counts anew);
        a shutdown is recorded in ``host_powered_off``: guests keep their state, as the
        simulation has no host to lose them with."""
        self._enter("host_power_action")
        with self._lock:
            self.host_powered_off = action == "shutdown"
            if action in ("reboot", "startup"):
                self._host_started_at = self._clock()
        return action

    def get_available_nodes(self, refresh: bool = False) -> list[str]:
        return list(self.config.nodes)

    def get_available_resource(self, nodename: str) -> HostResources:
        if nodename not in self.config.nodes:
            raise errors.PermanentDriverError(f"Node {nodename} is not managed by this host")
        with self._lock:
            specs = [g.spec for g in self._guests.values()]
        flavors = [s.flavor for s in specs]
        # A volume-backed guest's root disk is its volume, not this node's disk.
        local_gb = sum(
            (0 if s.root_volume is not None else s.flavor.root_gb) + s.flavor.ephemeral_gb
            for s in specs
        )
        cfg = self.config
        cpu = {"arch": "x86_64", "model": "Nehalem", "vendor": "Intel", "features": ["pge", "clflush"],
               "topology": {"cores": 1, "threads": 1, "sockets": 4}}  # fmt: skip
        return HostResources(
            nodename=nodename,
            vcpus=cfg.vcpus,
            memory_mb=cfg.memory_mb,
            local_gb=cfg.local_gb,
            vcpus_used=sum(f.vcpus for f in flavors),
            memory_mb_used=sum(f.memory_mb for f in flavors),
            local_gb_used=local_gb,
            hypervisor_type=cfg.hypervisor_type,
            hypervisor_version=cfg.hypervisor_version,
            hypervisor_hostname=nodename,
            cpu_info=json.dumps(cpu),
            running_vms=len(flavors),
            supported_instances=(("x86_64", cfg.hypervisor_type, "hvm"),),
        )

    def get_inventory(self, nodename: str, policy: InventoryPolicy) -> NodeInventory:
        return NodeInventory.standard(
            nodename, self.get_available_resource(nodename), policy, self.config.traits
        )

    # --- guests ------------------------------------------------------------------------------

    def list_instances(self) -> list[str]:
        with self._lock:
            return [g.spec.ref.name for g in self._guests.values()]

    def list_instance_uuids(self) -> list[str]:
        with self._lock:
            return list(self._guests)

    def get_info(self, instance: InstanceRef, use_cache: bool = True) -> InstanceInfo:
        with self._lock:
            return InstanceInfo(self._guest(instance.uuid).state, internal_id=instance.uuid)

    def spawn(
        self,
        instance: InstanceSpec,
        *,
        admin_password: str | None = None,
        injected_files: Sequence[InjectedFile] = (),
        power_on: bool = True,
    ) -> None:
        self._enter("spawn", instance.uuid)
        state = PowerState.RUNNING if power_on else PowerState.SHUTDOWN
        with self._lock:
            existing = self._guests.get(instance.uuid)
            if existing is not None and existing.spec != instance:
                raise errors.InstanceExists(instance.uuid)
            if existing is None:
                self._guests[instance.uuid] = _Guest(instance, PowerState.SHUTDOWN,
                                                     ports={v.port_id: v for v in instance.network},
                                                     volumes=_boot_volumes(instance))  # fmt: skip
        if instance.config_drive and instance.config_drive_files:
            self._write_config_drive(instance)
        if power_on:
            self._transition(instance.uuid, "spawn", {PowerState.SHUTDOWN}, state)

    def config_drive_path(self, uuid: str) -> Path | None:
        """Where the guest's config drive image is (None: the driver keeps no files)."""
        root = self.config.instances_path
        return None if root is None else Path(root) / uuid / "disk.config"

    def _write_config_drive(self, instance: InstanceSpec) -> None:
        """The config drive image (ISO 9660, or vfat as ``config_drive_format`` says) in the
        guest's directory, as Nova's libvirt driver keeps ``disk.config``."""
        path = self.config_drive_path(instance.uuid)
        if path is None:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        write_drive(path, instance.config_drive_files, self.config.config_drive_format)

    def destroy(
        self,
        instance: InstanceRef,
        *,
        network: Sequence[NetworkInterface] = (),
        destroy_disks: bool = True,
    ) -> None:
        self._enter("destroy", instance.uuid)
        with self._lock:
            guest = self._guests.pop(instance.uuid, None)
        drive = self.config_drive_path(instance.uuid)
        if destroy_disks and drive is not None and drive.exists():
            drive.unlink()
            with contextlib.suppress(OSError):
                drive.parent.rmdir()
        self.consoles.close(instance.uuid)
        if guest is not None and guest.state != PowerState.SHUTDOWN:
            self._emit(instance.uuid, _T.STOPPED)

    def cleanup(
        self,
        instance: InstanceRef,
        *,
        network: Sequence[NetworkInterface] = (),
        destroy_disks: bool = True,
        destroy_vifs: bool = True,
    ) -> None:
        self._enter("cleanup", instance.uuid)

    def reboot(self, instance: InstanceRef, reboot_type: RebootType) -> None:
        self._enter("reboot", instance.uuid)
        with self._lock:
            guest = self._guest(instance.uuid)
            if reboot_type == RebootType.SOFT and guest.state != PowerState.RUNNING:
                raise errors.InvalidGuestState(
                    instance.uuid, "soft reboot", guest.state.name.lower()
                )
            guest.log.append(f"reboot {reboot_type}")
            guest.log.extend(_boot_log(guest.spec))
        self._transition(instance.uuid, "reboot", set(PowerState), PowerState.RUNNING)

    def power_off(self, instance: InstanceRef, timeout: int = 0, retry_interval: int = 0) -> None:
        """A guest that vanished behind our back is as off as can be: nothing to do."""
        self._enter("power_off", instance.uuid)
        if instance.uuid not in self._guests:
            return
        self._transition(instance.uuid, "power off", set(PowerState), PowerState.SHUTDOWN)

    def power_on(self, instance: InstanceSpec) -> None:
        """Start the guest; one that vanished behind our back is defined again."""
        self._enter("power_on", instance.uuid)
        if instance.uuid not in self._guests:
            self.spawn(instance)
            return
        allowed = {PowerState.SHUTDOWN, PowerState.CRASHED, PowerState.NOSTATE}
        self._transition(instance.uuid, "power on", allowed, PowerState.RUNNING)

    def pause(self, instance: InstanceRef) -> None:
        self._enter("pause", instance.uuid)
        self._transition(instance.uuid, "pause", {PowerState.RUNNING}, PowerState.PAUSED)

    def unpause(self, instance: InstanceRef) -> None:
        self._enter("unpause", instance.uuid)
        self._transition(instance.uuid, "unpause", {PowerState.PAUSED}, PowerState.RUNNING)

    def suspend(self, instance: InstanceRef) -> None:
        self._enter("suspend", instance.uuid)
        self._transition(instance.uuid, "suspend", {PowerState.RUNNING}, PowerState.SUSPENDED)

    def resume(self, instance: InstanceSpec) -> None:
        self._enter("resume", instance.uuid)
        self._transition(instance.uuid, "resume", {PowerState.SUSPENDED}, PowerState.RUNNING)

    def rescue(
        self, instance: InstanceSpec, rescue_image: ImageSpec, rescue_password: str | None
    ) -> None:
        self._enter("rescue", instance.uuid)
        with self._lock:
            self._guest(instance.uuid).rescued = True
        self._transition(instance.uuid, "rescue", set(PowerState), PowerState.RUNNING)

    def unrescue(self, instance: InstanceRef) -> None:
        self._enter("unrescue", instance.uuid)
        with self._lock:
            self._guest(instance.uuid).rescued = False
        self._transition(instance.uuid, "unrescue", set(PowerState), PowerState.RUNNING)

    def is_rescued(self, instance: InstanceRef) -> bool:
        """Test hook: whether the guest currently boots from a rescue image."""
        with self._lock:
            return self._guest(instance.uuid).rescued

    def set_admin_password(self, instance: InstanceRef, new_password: str) -> None:
        self._enter("set_admin_password", instance.uuid)
        with self._lock:
            self._guest(instance.uuid).log.append("admin password changed")

    def trigger_crash_dump(self, instance: InstanceRef) -> None:
        self._enter("trigger_crash_dump", instance.uuid)
        with self._lock:
            self._guest(instance.uuid).log.append("NMI received")

    def snapshot(
        self, instance: InstanceRef, target: SnapshotTarget, update_task_state: TaskStateCallback
    ) -> SnapshotResult:
        self._enter("snapshot", instance.uuid)
        with self._lock:
            guest = self._guest(instance.uuid)
            disk = simulated_disk(guest.spec, target.image_id)
            guest.log.append(f"root disk copied into image {target.image_id}")
        update_task_state(TaskState.IMAGE_PENDING_UPLOAD, None)
        update_task_state(TaskState.IMAGE_UPLOADING, TaskState.IMAGE_PENDING_UPLOAD)
        return SnapshotResult(
            target.image_id, len(disk), target.disk_format, target.container_format, (disk,)
        )

    def migrate_disk_and_power_off(
        self,
        instance: InstanceSpec,
        dest_host: str,
        new_flavor: FlavorSpec,
        *,
        timeout: int = 0,
        retry_interval: int = 0,
    ) -> DiskTransfer:
        self._enter("migrate_disk_and_power_off", instance.uuid)
        self._transition(instance.uuid, "migrate", set(PowerState), PowerState.SHUTDOWN)
        with self._lock:  # the volumes are disconnected from this host (libvirt's)
            self._guest(instance.uuid).volumes.clear()
        return DiskTransfer(instance.uuid, ({"path": f"fake://{instance.uuid}/disk"},))

    def finish_migration(
        self,
        migration: MigrationRef,
        instance: InstanceSpec,
        disks: DiskTransfer,
        *,
        resize_instance: bool,
        power_on: bool = True,
    ) -> None:
        self._enter("finish_migration", instance.uuid)
        with self._lock:
            existing = self._guests.get(instance.uuid)
            if existing is None:
                self._guests[instance.uuid] = _Guest(instance, PowerState.SHUTDOWN,
                                                     volumes=_boot_volumes(instance))  # fmt: skip
            elif existing.spec != instance:  # same-host resize: keep the old definition
                existing.previous_spec = existing.previous_spec or existing.spec
                existing.spec = instance
            if existing is not None:
                existing.volumes = _boot_volumes(instance)
        if power_on:
            self._transition(instance.uuid, "finish migration", set(PowerState), PowerState.RUNNING)

    def confirm_migration(self, migration: MigrationRef, instance: InstanceRef) -> None:
        self._enter("confirm_migration", instance.uuid)
        with self._lock:
            guest = self._guests.get(instance.uuid)
            if guest is None:
                return
            if migration.source_host == migration.dest_host:
                guest.previous_spec = None
            else:
                del self._guests[instance.uuid]

    def finish_revert_migration(
        self, migration: MigrationRef, instance: InstanceSpec, *, power_on: bool = True
    ) -> None:
        self._enter("finish_revert_migration", instance.uuid)
        with self._lock:
            guest = self._guests.get(instance.uuid)
            if guest is None:
                self._guests[instance.uuid] = _Guest(instance, PowerState.SHUTDOWN,
                                                     volumes=_boot_volumes(instance))  # fmt: skip
            else:
                guest.spec, guest.previous_spec = instance, None
                guest.volumes = _boot_volumes(instance)
        if power_on:
            self._transition(instance.uuid, "revert", set(PowerState), PowerState.RUNNING)

    def live_migration(
        self,
        instance: InstanceRef,
        dest_host: str,
        on_progress: ProgressCallback,
        *,
        block_migration: bool = False,
    ) -> None:
        self._enter("live_migration", instance.uuid)
        with self._lock:
            guest = self._guest(instance.uuid)
            guest.migrating, guest.abort_requested = True, False
            total = guest.spec.flavor.memory_mb * 1024 * 1024
        steps = max(1, self.config.live_migration_steps)
        try:
            for step in range(steps + 1):
                with self._lock:
                    if guest.abort_requested:
                        raise errors.MigrationAborted(instance.uuid)
                on_progress(
                    LiveMigrationProgress(instance.uuid, total, total * (steps - step) // steps)
                )
        finally:
            with self._lock:
                guest.migrating = False
        with self._lock:
            self._guests.pop(instance.uuid, None)
        self._emit(instance.uuid, _T.MIGRATION_COMPLETED)

    def post_live_migration_at_destination(self, instance: InstanceSpec) -> None:
        self._enter("post_live_migration_at_destination", instance.uuid)
        with self._lock:
            self._guests.setdefault(instance.uuid, _Guest(instance, PowerState.RUNNING,
                                                          volumes=_boot_volumes(instance)))  # fmt: skip

    def live_migration_abort(self, instance: InstanceRef) -> None:
        self._enter("live_migration_abort", instance.uuid)
        with self._lock:
            guest = self._guest(instance.uuid)
            if not guest.migrating:
                raise errors.InvalidGuestState(instance.uuid, "abort migration", "not migrating")
            guest.abort_requested = True

    def live_migration_force_complete(self, instance: InstanceRef) -> None:
        self._enter("live_migration_force_complete", instance.uuid)
        with self._lock:
            self._guest(instance.uuid)

    def attach_volume(self, instance: InstanceRef, attachment: VolumeAttachment) -> None:
        self._enter("attach_volume", instance.uuid)
        with self._lock:
            self._guest(instance.uuid).volumes[attachment.volume_id] = attachment

    def detach_volume(self, instance: InstanceRef, volume_id: str) -> None:
        self._enter("detach_volume", instance.uuid)
        with self._lock:
            self._guest(instance.uuid).volumes.pop(volume_id, None)

    def _with_volume(self, uuid: str, volume_id: str) -> _Guest:
        """The guest, which must have the volume (caller holds the lock)."""
        guest = self._guest(uuid)
        if volume_id not in guest.volumes:
            raise errors.PermanentDriverError(f"Volume {volume_id} is not attached to {uuid}")
        return guest

    def swap_volume(
        self, instance: InstanceRef, old: VolumeAttachment, new: VolumeAttachment, resize_to: int
    ) -> None:
        self._enter("swap_volume", instance.uuid)
        with self._lock:
            if new.volume_id in self._guest(instance.uuid).volumes:
                return
            guest = self._with_volume(instance.uuid, old.volume_id)
            _copy_volume_data(old, new)
            del guest.volumes[old.volume_id]
            guest.volumes[new.volume_id] = dataclasses.replace(new, mountpoint=old.mountpoint)
            if resize_to:
                guest.volume_sizes[new.volume_id] = resize_to * 1024**3

    def extend_volume(
        self, instance: InstanceRef, attachment: VolumeAttachment, new_size: int
    ) -> None:
        self._enter("extend_volume", instance.uuid)
        with self._lock:
            guest = self._with_volume(instance.uuid, attachment.volume_id)
            guest.volume_sizes[attachment.volume_id] = new_size

    def volume_snapshot_create(
        self, instance: InstanceRef, volume_id: str, create_info: Mapping[str, JsonValue]
    ) -> None:
        self._enter("volume_snapshot_create", instance.uuid)
        with self._lock:
            taken = self._with_volume(instance.uuid, volume_id).volume_snapshots.setdefault(
                volume_id, []
            )
            snapshot_id = str(create_info.get("snapshot_id"))
            if snapshot_id not in taken:
                taken.append(snapshot_id)

    def volume_snapshot_delete(
        self, instance: InstanceRef, volume_id: str, snapshot_id: str, delete_info: Mapping[str, JsonValue]
    ) -> None:  # fmt: skip
        self._enter("volume_snapshot_delete", instance.uuid)
        with self._lock:
            taken = self._guest(instance.uuid).volume_snapshots.get(volume_id, [])
            if snapshot_id in taken:
                taken.remove(snapshot_id)

    def attach_interface(self, instance: InstanceRef, vif: NetworkInterface) -> None:
        self._enter("attach_interface", instance.uuid)
        with self._lock:
            self._guest(instance.uuid).ports[vif.port_id] = vif

    def detach_interface(self, instance: InstanceRef, port_id: str) -> None:
        self._enter("detach_interface", instance.uuid)
        with self._lock:
            self._guest(instance.uuid).ports.pop(port_id, None)

    def attached(self, instance: InstanceRef) -> tuple[frozenset[str], frozenset[str]]:
        """Test hook: (volume ids, port ids) currently plugged into the guest."""
        with self._lock:
            guest = self._guest(instance.uuid)
            return frozenset(guest.volumes), frozenset(guest.ports)

    def get_console_output(self, instance: InstanceRef) -> str:
        self._enter("get_console_output", instance.uuid)
        with self._lock:
            self._guest(instance.uuid)
        return self._console_log(instance.uuid)

    def get_vnc_console(self, instance: InstanceRef) -> ConsoleInfo:
        """A real RFB 3.8 server for the guest (openkeel.virt.fake_consoles)."""
        self._enter("get_vnc_console", instance.uuid)
        with self._lock:
            title = self._guest(instance.uuid).spec.display_name or instance.name

        def serve(conn: socket.socket) -> None:
            fake_consoles.serve_rfb(conn, title)

        return ConsoleInfo("127.0.0.1", self.consoles.port(instance.uuid, "vnc", serve))

    def get_serial_console(self, instance: InstanceRef) -> ConsoleInfo:
        """A real TCP serial line for the guest: its console log, then an echo."""
        self._enter("get_serial_console", instance.uuid)
        with self._lock:
            self._guest(instance.uuid)

        def serve(conn: socket.socket) -> None:
            fake_consoles.serve_serial(conn, lambda: self._console_log(instance.uuid))

        return ConsoleInfo("127.0.0.1", self.consoles.port(instance.uuid, "serial", serve))

    def _console_log(self, uuid: str) -> str:
        with self._lock:
            guest = self._guests.get(uuid)
            lines = [] if guest is None else guest.log
            return "".join(f"{line}\n" for line in ["FAKE CONSOLE OUTPUT", *lines])

    def _guest_uptime(self, guest: _Guest) -> int | None:
        if guest.state != PowerState.RUNNING or guest.booted_at is None:
            return None
        return max(0, int((self._clock() - guest.booted_at).total_seconds()))

    def get_diagnostics(self, instance: InstanceRef) -> dict[str, JsonValue]:
        """libvirt-style counters, as Nova's libvirt driver names them: per vCPU time, memory
        (KiB), per disk and per interface (``tap<port>``) counters; the simulation moves no
        data, so the counters are 0 and the CPU time is the guest's uptime."""
        self._enter("get_diagnostics", instance.uuid)
        with self._lock:
            guest = self._guest(instance.uuid)
            uptime_ns = (self._guest_uptime(guest) or 0) * 10**9
            found: dict[str, JsonValue] = {
                f"cpu{i}_time": uptime_ns for i in range(guest.spec.flavor.vcpus)
            }
            found["memory"] = guest.spec.flavor.memory_mb * 1024
            for disk in ["vda", *(f"vd{chr(ord('b') + i)}" for i in range(len(guest.volumes)))]:
                for counter in ("read", "read_req", "write", "write_req", "errors"):
                    found[f"{disk}_{counter}"] = 0
            for port_id in guest.ports:
                for counter in ("rx", "rx_drop", "rx_errors", "rx_packets", "tx", "tx_drop", "tx_errors", "tx_packets"):  # fmt: skip
                    found[f"tap{port_id[:11]}_{counter}"] = 0
            return found

    def get_instance_diagnostics(self, instance: InstanceRef) -> Diagnostics:
        self._enter("get_instance_diagnostics", instance.uuid)
        with self._lock:
            guest = self._guest(instance.uuid)
            spec = guest.spec
            uptime = self._guest_uptime(guest)
            return Diagnostics(
                state=guest.state.notification_name,
                # Nova's API names only its own drivers; the simulation stands for libvirt.
                driver="libvirt",
                hypervisor=self.config.hypervisor_type,
                hypervisor_os="linux",
                uptime=uptime,
                config_drive=spec.config_drive,
                num_cpus=spec.flavor.vcpus,
                num_nics=len(guest.ports),
                num_disks=1 + len(guest.volumes),
                memory_mb=spec.flavor.memory_mb,
                memory_used_mb=spec.flavor.memory_mb if uptime is not None else 0,
                cpu_details=tuple(
                    CpuDiagnostics(id=i, time=(uptime or 0) * 10**9, utilisation=0)
                    for i in range(spec.flavor.vcpus)
                ),
                nic_details=tuple(
                    NicDiagnostics(
                        mac_address=p.mac_address,
                        rx_octets=0,
                        rx_errors=0,
                        rx_drop=0,
                        rx_packets=0,
                        tx_octets=0,
                        tx_errors=0,
                        tx_drop=0,
                        tx_packets=0,
                    )
                    for p in guest.ports.values()
                ),
                disk_details=tuple(
                    DiskDiagnostics(
                        read_bytes=0,
                        read_requests=0,
                        write_bytes=0,
                        write_requests=0,
                        errors_count=0,
                    )
                    for _ in range(1 + len(guest.volumes))
                ),
            )


_PAUSED_LIKE = {PowerState.PAUSED, PowerState.SUSPENDED}

__all__ = ["FakeDriver", "FakeDriverConfig", "InjectedFailure"]
