"""The support table: every Nova flavor extra spec and image property, and what KubeVirt does.

Read by ``resolution.resolve`` (to refuse or ignore keys no rule consumed) and rendered into
docs/kubevirt-support.md by :func:`render_markdown` (a test keeps both in sync, another checks
that every extra spec Nova validates and every ImageMetaProps field has a row).
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass

SUPPORTED = "supported"
EMULATED = "emulated"
IGNORED = "ignored"
REFUSED = "refused"


@dataclass(frozen=True)
class SupportRow:
    pattern: str  # fnmatch pattern of the key
    source: str  # "flavor" | "image"
    status: str
    kubevirt: str  # the KubeVirt field(s) used, "-" when none
    note: str = ""


def _rows(source: str, *rows: tuple[str, str, str, str]) -> tuple[SupportRow, ...]:
    return tuple(SupportRow(p, source, s, k, n) for p, s, k, n in rows)


_S, _E, _I, _R = SUPPORTED, EMULATED, IGNORED, REFUSED
_PLACEMENT = "scheduling only: handled by Placement/our scheduler before the driver runs"

FLAVOR_ROWS = _rows(
    "flavor",
    ("hw:cpu_policy", _S, "dom.cpu.dedicatedCpuPlacement", "mixed refused: all or no vCPUs pinned"),
    ("hw:cpu_dedicated_mask", _R, "-", "mixed pinning is not expressible"),
    ("hw:cpu_thread_policy", _E, "-", "prefer: best effort; require/isolate refused"),
    ("hw:emulator_threads_policy", _S, "dom.cpu.isolateEmulatorThread", "share: emulated"),
    ("hw:cpu_sockets", _S, "dom.cpu.sockets", ""),
    ("hw:cpu_cores", _S, "dom.cpu.cores", ""),
    ("hw:cpu_threads", _S, "dom.cpu.threads", ""),
    ("hw:cpu_max_sockets", _S, "dom.cpu.maxSockets", "CPU hot-plug limit"),
    ("hw:cpu_max_cores", _I, "-", "the topology is written explicitly"),
    ("hw:cpu_max_threads", _I, "-", "the topology is written explicitly"),
    ("hw:cpu_realtime", _S, "dom.cpu.realtime", "needs dedicated CPUs"),
    ("hw:cpu_realtime_mask", _S, "dom.cpu.realtime.mask", "'^N' masks are made explicit"),
    ("hw:mem_page_size", _S, "dom.memory.hugepages.pageSize", "any: small pages"),
    ("hw:numa_nodes", _E, "dom.cpu.numa.guestMappingPassthrough", ">1 needs dedicated+hugepages"),
    ("hw:numa_cpus.*", _R, "-", "explicit guest NUMA layouts are not expressible"),
    ("hw:numa_mem.*", _R, "-", "explicit guest NUMA layouts are not expressible"),
    ("hw:mem_encryption", _S, "dom.launchSecurity.sev", "needs UEFI"),
    ("hw:mem_encryption_model", _S, "dom.launchSecurity.sev.policy", "amd-sev, amd-sev-es"),
    ("hw:watchdog_action", _S, "dom.devices.watchdog.i6300esb", "pause/none refused"),
    ("hw_rng:allowed", _S, "dom.devices.rng", "gates hw_rng_model"),
    ("hw_rng:rate_bytes", _I, "-", "KubeVirt has no RNG rate limit"),
    ("hw_rng:rate_period", _I, "-", "KubeVirt has no RNG rate limit"),
    ("hw_video:ram_max_mb", _I, "-", "video RAM is fixed by KubeVirt"),
    ("hw:vif_multiqueue_enabled", _S, "dom.devices.networkInterfaceMultiqueue", ""),
    ("hw:boot_menu", _I, "-", "no boot menu setting"),
    ("os:secure_boot", _S, "dom.firmware.bootloader.efi.secureBoot + features.smm", ""),
    ("hw:serial_port_count", _S, "dom.devices.autoattachSerialConsole", "0 or 1; more refused"),
    ("hw:tpm_version", _S, "dom.devices.tpm", "2.0 only"),
    ("hw:tpm_model", _E, "dom.devices.tpm", "KubeVirt chooses the model"),
    ("hw:tpm_secret_security", _I, "-", "TPM state is kept by KubeVirt"),
    ("hw:sound_model", _S, "dom.devices.sound", "ich9, ac97"),
    ("hw:hide_hypervisor_id", _S, "dom.features.kvm.hidden", ""),
    ("hide_hypervisor_id", _S, "dom.features.kvm.hidden", "legacy name"),
    ("hw:locked_memory", _I, "-", "KubeVirt locks memory itself where required"),
    ("hw:pci_numa_affinity_policy", _I, "-", "the kubelet topology manager decides"),
    ("hw:pmem", _R, "-", "no virtual persistent memory"),
    ("hw:pmu", _I, "-", "no PMU switch in KubeVirt"),
    ("hw:usb_model", _I, "-", "KubeVirt chooses the USB controller"),
    ("hw:redirected_usb_ports", _I, "-", "USB redirection is a client feature"),
    ("hw:viommu_model", _R, "-", "no vIOMMU in KubeVirt guests"),
    ("hw:virtio_packed_ring", _I, "-", "not configurable"),
    ("hw:ephemeral_encryption", _R, "-", "encrypt through the StorageClass"),
    ("hw:ephemeral_encryption_format", _R, "-", "encrypt through the StorageClass"),
    ("pci_passthrough:alias", _S, "dom.devices.hostDevices", "[kubevirt] pci_alias_resources"),
    ("accel:device_profile", _R, "-", "no Cyborg accelerators"),
    ("quota:cpu_quota", _S, "dom.resources.limits.cpu", "vcpus*quota/period"),
    ("quota:cpu_period", _S, "dom.resources.limits.cpu", "with quota:cpu_quota"),
    ("quota:cpu_*", _I, "-", "relative CPU weights follow the pod CPU request"),
    ("quota:memory_*", _I, "-", "VMware only"),
    ("quota:disk_*", _I, "-", "disk QoS belongs to the StorageClass"),
    ("quota:vif_*", _I, "-", "network QoS belongs to the CNI"),
    ("resources*:VGPU", _S, "dom.devices.gpus", "[kubevirt] vgpu_resource_name"),
    ("resources*:*", _I, "-", _PLACEMENT),
    ("trait*:HW_CPU_X86_AMD_SEV*", _I, "-", _PLACEMENT),
    ("trait*:HW_CPU_X86_INTEL_TDX", _I, "-", _PLACEMENT),
    ("trait*:HW_CPU_X86_*", _S, "dom.cpu.features", "required: require, forbidden: forbid"),
    ("trait*:*", _I, "-", _PLACEMENT),
    ("group_policy", _I, "-", _PLACEMENT),
    ("aggregate_instance_extra_specs:*", _I, "-", _PLACEMENT),
    ("capabilities:*", _I, "-", _PLACEMENT),
    ("vmware:*", _I, "-", "VMware driver only"),
)

IMAGE_ROWS = _rows(
    "image",
    ("hw_architecture", _S, "tmpl.architecture", "x86_64, aarch64, s390x"),
    ("hw_auto_disk_config", _I, "-", "Xen only"),
    ("hw_boot_menu", _I, "-", "no boot menu setting"),
    ("hw_cdrom_bus", _S, "dom.devices.disks[].cdrom.bus", "ide emulated as sata"),
    ("hw_cpu_sockets", _S, "dom.cpu.sockets", "flavor wins"),
    ("hw_cpu_cores", _S, "dom.cpu.cores", "flavor wins"),
    ("hw_cpu_threads", _S, "dom.cpu.threads", "flavor wins"),
    ("hw_cpu_max_sockets", _S, "dom.cpu.maxSockets", "flavor wins"),
    ("hw_cpu_max_cores", _I, "-", "the topology is written explicitly"),
    ("hw_cpu_max_threads", _I, "-", "the topology is written explicitly"),
    ("hw_cpu_policy", _S, "dom.cpu.dedicatedCpuPlacement", "may not contradict the flavor"),
    ("hw_cpu_thread_policy", _E, "-", "prefer: best effort; require/isolate refused"),
    ("hw_cpu_realtime_mask", _S, "dom.cpu.realtime.mask", ""),
    ("hw_device_id", _I, "-", "VMware only"),
    ("hw_disk_bus", _S, "dom.devices.disks[].disk.bus", "ide emulated as sata"),
    ("hw_disk_type", _I, "-", "VMware only"),
    ("hw_emulation_architecture", _R, "-", "no emulated (TCG) architectures"),
    ("hw_ephemeral_encryption*", _R, "-", "encrypt through the StorageClass"),
    ("hw_firmware_stateless", _I, "-", "EFI variables are not persisted (efi.persistent unset)"),
    ("hw_firmware_type", _S, "dom.firmware.bootloader.{bios,efi}", ""),
    ("hw_floppy_bus", _R, "-", "no floppy devices"),
    ("hw_input_bus", _S, "dom.devices.inputs[].bus", "usb, virtio"),
    ("hw_ipxe_boot", _I, "-", "network boot is not configured"),
    ("hw_locked_memory", _I, "-", "KubeVirt locks memory itself where required"),
    ("hw_machine_type", _S, "dom.machine.type", "q35 family; pc/i440fx refused"),
    ("hw_maxphysaddr_*", _I, "-", "not configurable"),
    ("hw_mem_encryption", _S, "dom.launchSecurity.sev", "needs UEFI"),
    ("hw_mem_encryption_model", _S, "dom.launchSecurity.sev.policy", ""),
    ("hw_mem_page_size", _S, "dom.memory.hugepages.pageSize", "only if the flavor allows"),
    ("hw_numa_nodes", _E, "dom.cpu.numa.guestMappingPassthrough", "as hw:numa_nodes"),
    ("hw_numa_cpus*", _R, "-", "explicit guest NUMA layouts are not expressible"),
    ("hw_numa_mem*", _R, "-", "explicit guest NUMA layouts are not expressible"),
    ("hw_pci_numa_affinity_policy", _I, "-", "the kubelet topology manager decides"),
    ("hw_pmu", _I, "-", "no PMU switch in KubeVirt"),
    ("hw_pointer_model", _S, "dom.devices.inputs[] tablet", "usbtablet, ps2mouse"),
    (
        "hw_qemu_guest_agent",
        _S,
        "tmpl.accessCredentials[].userPassword",
        "channel always present; yes: password Secret for changePassword",
    ),
    ("hw_redirected_usb_ports", _I, "-", "USB redirection is a client feature"),
    ("hw_rescue_*", _I, "-", "rescue disk is always virtio, first boot device"),
    ("hw_rng_model", _S, "dom.devices.rng", "virtio; needs hw_rng:allowed"),
    ("hw_scsi_model", _S, "-", "virtio-scsi only"),
    ("hw_serial_port_count", _S, "dom.devices.autoattachSerialConsole", "0 or 1"),
    ("hw_sound_model", _S, "dom.devices.sound", "ich9, ac97"),
    ("hw_time_hpet", _S, "dom.clock.timer.hpet", ""),
    ("hw_tpm_model", _E, "dom.devices.tpm", "KubeVirt chooses the model"),
    ("hw_tpm_version", _S, "dom.devices.tpm", "2.0 only"),
    ("hw_usb_model", _I, "-", "KubeVirt chooses the USB controller"),
    ("hw_video_model", _S, "dom.devices.video.type / autoattachGraphicsDevice", ""),
    ("hw_video_ram", _I, "-", "video RAM is fixed by KubeVirt"),
    ("hw_vif_model", _S, "dom.devices.interfaces[].model", ""),
    ("hw_vif_multiqueue_enabled", _S, "dom.devices.networkInterfaceMultiqueue", ""),
    ("hw_viommu_model", _R, "-", "no vIOMMU in KubeVirt guests"),
    ("hw_virtio_packed_ring", _I, "-", "not configurable"),
    ("hw_vm_mode", _I, "-", "always hvm"),
    ("hw_watchdog_action", _S, "dom.devices.watchdog.i6300esb", "flavor wins"),
    ("img_config_drive", _S, "tmpl.volumes[].cloudInitConfigDrive", "mandatory forces it"),
    ("img_hide_hypervisor_id", _S, "dom.features.kvm.hidden", ""),
    ("img_*", _I, "-", "image service / other drivers' bookkeeping"),
    ("os_secure_boot", _S, "dom.firmware.bootloader.efi.secureBoot", "optional: enabled"),
    ("os_type", _E, "dom.features.hyperv", "windows: Hyper-V enlightenments, clock UTC"),
    ("os_*", _I, "-", "informational or agent-based (no Nova agent)"),
    ("traits_required", _I, "-", _PLACEMENT),
)

ROWS = FLAVOR_ROWS + IMAGE_ROWS


def lookup(key: str, source: str) -> SupportRow | None:
    """The first row of ``source`` whose pattern matches ``key``."""
    for row in FLAVOR_ROWS if source == "flavor" else IMAGE_ROWS:
        if fnmatch.fnmatchcase(key, row.pattern):
            return row
    return None


def render_markdown() -> str:
    """The tables of docs/kubevirt-support.md (between the generated-section markers)."""
    lines: list[str] = []
    for title, rows in (("Flavor extra specs", FLAVOR_ROWS), ("Image properties", IMAGE_ROWS)):
        lines += [f"### {title}", "", "| key | status | KubeVirt | note |", "|---|---|---|---|"]
        lines += [f"| `{r.pattern}` | {r.status} | {r.kubevirt} | {r.note} |" for r in rows]
        lines.append("")
    return "\n".join(lines)
