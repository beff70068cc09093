"""The catalog of flavor extra spec keys Nova 34.0.0 knows, with the values each accepts.

Data reproduced from Nova's extra spec registry (``nova/api/validation/extra_specs``), in
Nova's order: the first rule whose key pattern matches a key decides. Used by
``openkeel.domain.extra_specs.validate``; standard traits come from ``standard_traits.py``.
"""

from __future__ import annotations

from openkeel.domain.extra_specs.rules import ExtraSpecRule
from openkeel.domain.extra_specs.standard_traits import STANDARD_TRAITS

_GROUP = ("group", r"([a-zA-Z0-9_-]{1,64})?")
_FILTER = ("filter", r"(:\w+)*")
_TRAIT_VALUES = ("required", "forbidden")


_Params = tuple[tuple[str, str], ...]


def _text(name: str, params: _Params = (), deprecated: bool = False) -> ExtraSpecRule:
    return ExtraSpecRule(name, "str", params=params, deprecated=deprecated)


def _pattern(name: str, pattern: str, params: _Params = ()) -> ExtraSpecRule:
    return ExtraSpecRule(name, "str", pattern=pattern, params=params)


def _choice(name: str, choices: tuple[str, ...], params: _Params = ()) -> ExtraSpecRule:
    return ExtraSpecRule(name, "str", choices=choices, params=params)


def _integer(
    name: str, minimum: int | None = None, maximum: int | None = None, params: _Params = ()
) -> ExtraSpecRule:
    return ExtraSpecRule(name, "int", minimum=minimum, maximum=maximum, params=params)


def _boolean(name: str, deprecated: bool = False) -> ExtraSpecRule:
    return ExtraSpecRule(name, "bool", deprecated=deprecated)


def _capability(name: str) -> ExtraSpecRule:
    return _text(f"capabilities:{name}")


def _capability_tree(name: str) -> ExtraSpecRule:
    return _text(f"capabilities:{name}{{filter}}", params=(_FILTER,))


def _resource(name: str) -> ExtraSpecRule:
    return _integer(f"resources{{group}}:{name}", params=(_GROUP,))


def standard_trait_rules() -> tuple[ExtraSpecRule, ...]:
    """``trait{group}:<TRAIT>`` for every standard trait."""
    return tuple(
        _choice(f"trait{{group}}:{trait}", _TRAIT_VALUES, params=(_GROUP,))
        for trait in STANDARD_TRAITS
    )


RULES: tuple[ExtraSpecRule, ...] = (
    _text("accel:device_profile"),
    _text("aggregate_instance_extra_specs:{key}", params=(("key", ".+"),)),
    _capability("id"),
    _capability("uuid"),
    _capability("service_id"),
    _capability("host"),
    _capability("vcpus"),
    _capability("memory_mb"),
    _capability("local_gb"),
    _capability("vcpus_used"),
    _capability("memory_mb_used"),
    _capability("local_gb_used"),
    _capability("hypervisor_type"),
    _capability("hypervisor_version"),
    _capability("hypervisor_hostname"),
    _capability("free_ram_mb"),
    _capability("free_disk_gb"),
    _capability("current_workload"),
    _capability("running_vms"),
    _capability("disk_available_least"),
    _capability("host_ip"),
    _capability("mapped"),
    _capability("cpu_allocation_ratio"),
    _capability("ram_allocation_ratio"),
    _capability("disk_allocation_ratio"),
    _capability("total_usable_ram_mb"),
    _capability("total_usable_disk_gb"),
    _capability("disk_mb_used"),
    _capability("free_disk_mb"),
    _capability("vcpus_total"),
    _capability("num_instances"),
    _capability("num_io_ops"),
    _capability("failed_builds"),
    _capability("aggregates"),
    _capability("cell_uuid"),
    _capability("updated"),
    _capability_tree("cpu_info"),
    _capability_tree("metrics"),
    _capability_tree("stats"),
    _capability_tree("numa_topology"),
    _capability_tree("supported_hv_specs"),
    _capability_tree("pci_device_pools"),
    _capability_tree("nodename"),
    _capability_tree("pci_stats"),
    _capability_tree("supported_instances"),
    _capability_tree("limits"),
    _capability_tree("instances"),
    _boolean("hw:cpu_realtime"),
    _pattern("hw:cpu_realtime_mask", "(\\^)?\\d+((-\\d+)?(,\\^?\\d+(-\\d+)?)?)*"),
    _boolean("hw:hide_hypervisor_id"),
    _choice("hw:cpu_policy", ("dedicated", "shared", "mixed")),
    _choice("hw:cpu_thread_policy", ("prefer", "isolate", "require")),
    _choice("hw:emulator_threads_policy", ("isolate", "share")),
    _pattern("hw:cpu_dedicated_mask", "\\^?\\d+((-\\d+)?(,\\^?\\d+(-\\d+)?)?)*"),
    _pattern("hw:mem_page_size", "(large|small|any|\\d+([kKMGT]i?)?(b|bit|B)?)"),
    _boolean("hw:locked_memory"),
    _integer("hw:numa_nodes", minimum=1),
    _pattern(
        "hw:numa_cpus.{num}", "\\^?\\d+((-\\d+)?(,\\^?\\d+(-\\d+)?)?)*", params=(("num", "\\d+"),)
    ),
    _integer("hw:numa_mem.{num}", minimum=1, params=(("num", "\\d+"),)),
    _choice("hw:pci_numa_affinity_policy", ("required", "preferred", "legacy", "socket")),
    _integer("hw:cpu_sockets", minimum=1),
    _integer("hw:cpu_cores", minimum=1),
    _integer("hw:cpu_threads", minimum=1),
    _integer("hw:cpu_max_sockets", minimum=1),
    _integer("hw:cpu_max_cores", minimum=1),
    _integer("hw:cpu_max_threads", minimum=1),
    _boolean("hw:boot_menu"),
    _boolean("hw:vif_multiqueue_enabled"),
    _boolean("hw:mem_encryption"),
    _choice("hw:mem_encryption_model", ("amd-sev", "amd-sev-es", "amd-sev-snp", "intel-tdx")),
    _pattern("hw:pmem", "([a-zA-Z0-9_]+(,)?)+"),
    _boolean("hw:pmu"),
    _integer("hw:serial_port_count", minimum=0),
    _choice("hw:tpm_model", ("tpm-tis", "tpm-crb")),
    _choice("hw:tpm_version", ("1.2", "2.0")),
    _choice("hw:tpm_secret_security", ("user", "host", "deployment")),
    _choice("hw:watchdog_action", ("none", "pause", "poweroff", "reset", "disabled")),
    _choice("hw:viommu_model", ("intel", "smmuv3", "virtio", "auto")),
    _boolean("hw:virtio_packed_ring"),
    _choice("hw:sound_model", ("sb16", "es1370", "pcspk", "ac97", "ich6", "ich9", "usb", "virtio")),
    _choice("hw:usb_model", ("none", "nec-xhci", "qemu-xhci")),
    _integer("hw:redirected_usb_ports", minimum=0, maximum=15),
    _boolean("hw:ephemeral_encryption"),
    _choice("hw:ephemeral_encryption_format", ("plain", "luks", "luksv2")),
    _boolean("hw_rng:allowed"),
    _integer("hw_rng:rate_bytes", minimum=0),
    _integer("hw_rng:rate_period", minimum=0),
    _integer("hw_video:ram_max_mb", minimum=0),
    _boolean("hide_hypervisor_id", deprecated=True),
    _choice("group_policy", ("isolate", "none")),
    _choice("os:secure_boot", ("disabled", "required")),
    _pattern("pci_passthrough:alias", "[^:]+:\\d+(?:\\s*,\\s*[^:]+:\\d+)*"),
    _integer("quota:cpu_limit", minimum=0),
    _integer("quota:cpu_reservation"),
    _choice("quota:cpu_shares_level", ("custom", "high", "normal", "low")),
    _integer("quota:cpu_shares_share", minimum=0),
    _integer("quota:memory_limit", minimum=0),
    _integer("quota:memory_reservation"),
    _choice("quota:memory_shares_level", ("custom", "high", "normal", "low")),
    _integer("quota:memory_shares_share", minimum=0),
    _integer("quota:disk_io_limit", minimum=0),
    _integer("quota:disk_io_reservation"),
    _choice("quota:disk_io_shares_level", ("custom", "high", "normal", "low")),
    _integer("quota:disk_io_shares_share", minimum=0),
    _integer("quota:vif_limit", minimum=0),
    _integer("quota:vif_reservation"),
    _choice("quota:vif_shares_level", ("custom", "high", "normal", "low")),
    _integer("quota:vif_shares_share", minimum=0),
    _integer("quota:cpu_shares", minimum=0),
    _integer("quota:cpu_period", minimum=0),
    _integer("quota:cpu_quota"),
    _integer("quota:disk_read_bytes_sec", minimum=0),
    _integer("quota:disk_read_iops_sec", minimum=0),
    _integer("quota:disk_write_bytes_sec", minimum=0),
    _integer("quota:disk_write_iops_sec", minimum=0),
    _integer("quota:disk_total_bytes_sec", minimum=0),
    _integer("quota:disk_total_iops_sec", minimum=0),
    _integer("quota:vif_inbound_average", minimum=0),
    _integer("quota:vif_inbound_peak", minimum=0),
    _integer("quota:vif_inbound_burst", minimum=0),
    _integer("quota:vif_outbound_average", minimum=0),
    _integer("quota:vif_outbound_peak", minimum=0),
    _integer("quota:vif_outbound_burst", minimum=0),
    _resource("VCPU"),
    _resource("MEMORY_MB"),
    _resource("DISK_GB"),
    _resource("PCI_DEVICE"),
    _resource("SRIOV_NET_VF"),
    _resource("NUMA_SOCKET"),
    _resource("NUMA_CORE"),
    _resource("NUMA_THREAD"),
    _resource("NUMA_MEMORY_MB"),
    _resource("IPV4_ADDRESS"),
    _resource("VGPU"),
    _resource("VGPU_DISPLAY_HEAD"),
    _resource("NET_BW_EGR_KILOBIT_PER_SEC"),
    _resource("NET_BW_IGR_KILOBIT_PER_SEC"),
    _resource("PCPU"),
    _resource("MEM_ENCRYPTION_CONTEXT"),
    _resource("FPGA"),
    _resource("PGPU"),
    _resource("NET_PACKET_RATE_KILOPACKET_PER_SEC"),
    _resource("NET_PACKET_RATE_EGR_KILOPACKET_PER_SEC"),
    _resource("NET_PACKET_RATE_IGR_KILOPACKET_PER_SEC"),
    _integer(
        "resources{group}:CUSTOM_{resource}",
        params=(
            _GROUP,
            ("resource", "[A-Z0-9_]+"),
        ),
    ),
    *standard_trait_rules(),
    _choice(
        "trait{group}:CUSTOM_{trait}",
        ("required", "forbidden"),
        params=(
            _GROUP,
            ("trait", "[A-Z0-9_]+"),
        ),
    ),
    _text("vmware:hw_version"),
    _text("vmware:storage_policy"),
)
