"""Value types passed to and returned by virt drivers (see openkeel.virt.driver).

Frozen and self-contained so that a driver can build its hypervisor objects (e.g. KubeVirt
manifests) from them with pure functions: compute converts its instance record, flavor, image
and network info into these before calling the driver; no ORM or RPC object crosses the line.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from openkeel.domain.states import PowerState

JsonValue = str | int | float | bool | None


@dataclass(frozen=True)
class FlavorSpec:
    """The flavor as embedded in the instance (resizes pass the new one)."""

    flavor_id: str
    name: str
    vcpus: int
    memory_mb: int
    root_gb: int
    ephemeral_gb: int = 0
    swap_mb: int = 0
    extra_specs: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ImageSpec:
    """The Glance image the guest boots from (or is rescued with); properties are Glance's."""

    image_id: str
    disk_format: str | None = None
    container_format: str | None = None
    min_disk_gb: int = 0
    min_ram_mb: int = 0
    size_bytes: int | None = None
    properties: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class BlockDevice:
    """One block device mapping after compute resolved it (volumes attached on Cinder's side)."""

    source_type: str  # image | volume | snapshot | blank
    destination_type: str  # local | volume
    boot_index: int | None
    size_gb: int | None = None
    volume_id: str | None = None
    device_name: str | None = None
    disk_bus: str | None = None
    device_type: str | None = None  # disk | cdrom | lun
    guest_format: str | None = None  # e.g. swap
    delete_on_termination: bool = False
    connection_info: Mapping[str, JsonValue] = field(default_factory=dict)
    tag: str | None = None


@dataclass(frozen=True)
class NetworkInterface:
    """One bound port (Neutron VIF) with its addresses."""

    port_id: str
    network_id: str
    mac_address: str
    fixed_ips: tuple[str, ...] = ()
    vif_type: str = "ovs"
    vnic_type: str = "normal"
    mtu: int | None = None
    tag: str | None = None
    network_name: str = ""  # the network's label (the KubeVirt driver maps networks by name)


@dataclass(frozen=True)
class PortSecurity:
    """The security groups of a server's ports, as its network adapter reports them
    (decision 0077), for a driver that enforces them itself (KubeVirt: NetworkPolicies)."""

    # port id -> the ids of its groups (none: no port security)
    ports: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # group id -> Neutron's document (``security_group_rules`` with ``direction``...)
    groups: Mapping[str, Mapping[str, object]] = field(default_factory=dict)
    # remote group id -> the servers whose ports have it
    members: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class InstanceRef:
    """Enough to find a guest on the hypervisor: Nova UUID, hypervisor name, owning project."""

    uuid: str
    name: str
    project_id: str


@dataclass(frozen=True)
class InstanceSpec:
    """Everything a driver needs to define a guest (spawn, finish_migration, rescue...)."""

    ref: InstanceRef
    hostname: str
    user_id: str
    flavor: FlavorSpec
    image: ImageSpec | None  # None when booted from volume
    # The server's block device mappings, boot order first (compute's build fills them:
    # volumes created and attached); empty for operations that do not change disks.
    block_devices: tuple[BlockDevice, ...] = ()
    network: tuple[NetworkInterface, ...] = ()
    user_data: str | None = None  # base64, as the API received it
    metadata: Mapping[str, str] = field(default_factory=dict)
    key_data: str | None = None
    config_drive: bool = False
    display_name: str = ""
    availability_zone: str | None = None
    # The config drive's files (path, content), when the compute role made them at build
    # (decision 0058); not part of the guest's identity (random_seed differs on every build).
    config_drive_files: tuple[tuple[str, bytes], ...] = field(default=(), compare=False)

    @property
    def uuid(self) -> str:
        return self.ref.uuid

    @property
    def root_volume(self) -> BlockDevice | None:
        """The volume the guest boots from (boot index 0, destination volume, attached on
        Cinder's side: ``connection_info`` says how to reach it), None when the root disk is
        local (the image's, sized by the flavor). Drivers make it the root disk."""
        for device in self.block_devices:
            if device.boot_index == 0 and device.destination_type == "volume":
                return device
        return None


@dataclass(frozen=True)
class InjectedFile:
    """A personality file (legacy API < 2.57)."""

    path: str
    contents: bytes


class RebootType(enum.StrEnum):
    """Nova's reboot types: SOFT asks the guest (ACPI), HARD resets it."""

    SOFT = "SOFT"
    HARD = "HARD"


@dataclass(frozen=True)
class MigrationRef:
    """The migration record a cold migration/resize step belongs to."""

    migration_id: int
    source_host: str
    dest_host: str
    source_node: str
    dest_node: str
    migration_type: str = "resize"  # resize | migration | live-migration | evacuation


@dataclass(frozen=True)
class DiskTransfer:
    """What migrate_disk_and_power_off hands to finish_migration on the destination."""

    instance_uuid: str
    disks: tuple[Mapping[str, JsonValue], ...] = ()


@dataclass(frozen=True)
class VolumeAttachment:
    """A Cinder volume to hot-plug (connection_info from Cinder's attachment)."""

    volume_id: str
    mountpoint: str
    connection_info: Mapping[str, JsonValue] = field(default_factory=dict)
    disk_bus: str | None = None
    device_type: str | None = None
    tag: str | None = None


@dataclass(frozen=True)
class SnapshotTarget:
    """The image record (already created in the image service) a snapshot uploads into."""

    image_id: str
    name: str
    disk_format: str = "raw"
    container_format: str = "bare"


@dataclass(frozen=True)
class SnapshotResult:
    """What a snapshot produced. ``chunks`` are the disk's bytes for compute to upload into the
    image service; None when the data stays in the hypervisor's storage (KubeVirt: a CDI
    DataSource in the images namespace that servers booted from the image clone)."""

    image_id: str
    size_bytes: int
    disk_format: str
    container_format: str = "bare"
    chunks: Iterable[bytes] | None = None
    # Image properties the driver adds (where the data lives, for one).
    properties: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class InstanceInfo:
    """The guest as the hypervisor sees it."""

    state: PowerState
    internal_id: str | None = None  # hypervisor-side id (domain id, VMI uid...)


@dataclass(frozen=True)
class ConsoleInfo:
    """Where a console proxy connects to (Nova's ConsoleVNC / ConsoleSerial)."""

    host: str
    port: int
    internal_access_path: str | None = None


@dataclass(frozen=True)
class CpuDiagnostics:
    """One vCPU: its index, CPU time (ns) and utilisation (%) when known."""

    id: int | None = None
    time: int | None = None
    utilisation: int | None = None


@dataclass(frozen=True)
class NicDiagnostics:
    """One guest interface's counters (None: not reported)."""

    mac_address: str | None = None
    rx_octets: int | None = None
    rx_errors: int | None = None
    rx_drop: int | None = None
    rx_packets: int | None = None
    rx_rate: int | None = None
    tx_octets: int | None = None
    tx_errors: int | None = None
    tx_drop: int | None = None
    tx_packets: int | None = None
    tx_rate: int | None = None


@dataclass(frozen=True)
class DiskDiagnostics:
    """One guest disk's counters (None: not reported)."""

    read_bytes: int | None = None
    read_requests: int | None = None
    write_bytes: int | None = None
    write_requests: int | None = None
    errors_count: int | None = None


@dataclass(frozen=True)
class Diagnostics:
    """Standardised diagnostics (API >= 2.48, Nova's Diagnostics object); unknown values stay
    None. ``driver`` is one of Nova's driver names (its API schema enumerates them);
    ``memory_mb`` is the maximum, ``memory_used_mb`` what the guest uses when known."""

    state: str
    driver: str
    hypervisor: str | None = None
    hypervisor_os: str | None = None
    uptime: int | None = None
    config_drive: bool = False
    num_cpus: int = 0
    num_nics: int = 0
    num_disks: int = 0
    memory_mb: int = 0
    memory_used_mb: int | None = None
    cpu_details: tuple[CpuDiagnostics, ...] = ()
    nic_details: tuple[NicDiagnostics, ...] = ()
    disk_details: tuple[DiskDiagnostics, ...] = ()


@dataclass(frozen=True)
class LiveMigrationProgress:
    """Reported through the live_migration progress callback."""

    instance_uuid: str
    memory_total_bytes: int
    memory_remaining_bytes: int

    @property
    def percent(self) -> int:
        if self.memory_total_bytes <= 0:
            return 100
        done = self.memory_total_bytes - self.memory_remaining_bytes
        return done * 100 // self.memory_total_bytes


class LifecycleTransition(enum.IntEnum):
    """Nova's lifecycle event codes (nova.virt.event), also their order on the wire."""

    STARTED = 0
    STOPPED = 1
    PAUSED = 2
    RESUMED = 3
    SUSPENDED = 4
    POSTCOPY_STARTED = 5
    MIGRATION_COMPLETED = 6
    # Not Nova's and not a power change: the addresses the hypervisor's network gave the
    # guest changed (KubeVirt's pod network); compute records them on the ports.
    ADDRESSES_CHANGED = 100

    @property
    def title(self) -> str:
        return self.name.replace("_", " ").capitalize()


@dataclass(frozen=True)
class LifecycleEvent:
    """A guest changed power state without (or as a result of) a compute request."""

    instance_uuid: str
    transition: LifecycleTransition
    timestamp: datetime


@dataclass(frozen=True)
class HostResources:
    """Node totals and usage for the compute_nodes record (Nova's get_available_resource)."""

    nodename: str
    vcpus: int
    memory_mb: int
    local_gb: int
    vcpus_used: int
    memory_mb_used: int
    local_gb_used: int
    hypervisor_type: str
    hypervisor_version: int
    hypervisor_hostname: str
    cpu_info: str = "{}"
    disk_available_least: int = 0
    running_vms: int = 0
    # (architecture, hypervisor type, vm mode) triples the node can run; the scheduler's
    # ImagePropertiesFilter matches image properties against them (Nova's field of that name).
    supported_instances: tuple[tuple[str, str, str], ...] = ()


@dataclass(frozen=True)
class InventoryPolicy:
    """Operator settings applied to the raw totals (Nova: *_allocation_ratio, reserved_host_*)."""

    cpu_allocation_ratio: float = 4.0
    ram_allocation_ratio: float = 1.0
    disk_allocation_ratio: float = 1.0
    reserved_host_cpus: int = 0
    reserved_host_memory_mb: int = 512
    reserved_host_disk_mb: int = 0


@dataclass(frozen=True)
class Inventory:
    """One Placement inventory record."""

    total: int
    reserved: int = 0
    min_unit: int = 1
    max_unit: int = 1
    step_size: int = 1
    allocation_ratio: float = 1.0


@dataclass(frozen=True)
class NodeInventory:
    """What update_provider_tree reports for one node: inventories by resource class, traits."""

    nodename: str
    inventories: Mapping[str, Inventory]
    traits: frozenset[str] = frozenset()

    @classmethod
    def standard(
        cls,
        nodename: str,
        resources: HostResources,
        policy: InventoryPolicy,
        traits: frozenset[str] = frozenset({"COMPUTE_NODE"}),
    ) -> NodeInventory:
        """VCPU, MEMORY_MB and DISK_GB of a node's raw totals under the operator's policy
        (reserved disk rounds up to whole GB, as Nova's)."""
        inventories = {
            "VCPU": Inventory(resources.vcpus, policy.reserved_host_cpus, max_unit=resources.vcpus,
                              allocation_ratio=policy.cpu_allocation_ratio),
            "MEMORY_MB": Inventory(resources.memory_mb, policy.reserved_host_memory_mb,
                                   max_unit=resources.memory_mb,
                                   allocation_ratio=policy.ram_allocation_ratio),
            "DISK_GB": Inventory(resources.local_gb, -(-policy.reserved_host_disk_mb // 1024),
                                 max_unit=resources.local_gb,
                                 allocation_ratio=policy.disk_allocation_ratio),
        }  # fmt: skip
        return cls(nodename, inventories, traits)
