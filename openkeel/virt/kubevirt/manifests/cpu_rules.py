"""Extra-spec rules for CPU, memory, NUMA and resource quotas (see ``resolution.resolve``).

Each rule reads its flavor extra spec (wins) / image property, writes KubeVirt domain fields and
records what it did. Error texts of conditions Nova itself rejects are Nova's.
"""

from __future__ import annotations

import re

from openkeel.domain.errors import Invalid
from openkeel.virt.kubevirt.manifests.extra_specs import (
    FLAVOR,
    IMAGE,
    Draft,
    Picked,
    Rule,
    Treatment,
    truthy,
)

_POLICIES = ("dedicated", "shared", "mixed")
_THREAD_POLICIES = ("prefer", "isolate", "require")


def cpu_policy(d: Draft) -> None:
    flavor, image = d.pick("hw:cpu_policy", None), d.pick(None, "hw_cpu_policy")
    for picked in (flavor, image):
        if picked is not None and picked.value not in _POLICIES:
            where = "flavor extra specs" if picked.source == FLAVOR else "image properties"
            raise Invalid(
                f"CPU policy requested from '{where}' is invalid, given: '{picked.value}', "
                f"available: '{', '.join(_POLICIES)}'."
            )
    if flavor is not None and image is not None and flavor.value != image.value:
        raise Invalid(
            "Image property 'hw_cpu_policy' is not permitted to override CPU pinning policy "
            "set against the flavor"
        )
    chosen = flavor or image
    if chosen is None:
        return
    if chosen.value == "mixed":
        raise d.refuse(chosen, "KubeVirt pins all vCPUs or none (no mixed policy)")
    d.dedicated = chosen.value == "dedicated"
    if d.dedicated:
        d.put("cpu.dedicatedCpuPlacement", True)
    d.record_both("hw:cpu_policy", "hw_cpu_policy", Treatment.APPLIED)


def cpu_thread_policy(d: Draft) -> None:
    picked = d.pick("hw:cpu_thread_policy", "hw_cpu_thread_policy")
    if picked is None:
        return
    if picked.value not in _THREAD_POLICIES:
        where = "flavor extra specs" if picked.source == FLAVOR else "image properties"
        raise Invalid(
            f"CPU thread policy requested from '{where}' is invalid, given: "
            f"'{picked.value}', available: '{', '.join(_THREAD_POLICIES)}'."
        )
    if not d.dedicated:
        raise Invalid("Cannot set cpu thread pinning policy in a non dedicated cpu pinning policy")
    if picked.value != "prefer":
        raise d.refuse(picked, "the kubelet CPU manager has no per-VM thread policy")
    d.record_both(
        "hw:cpu_thread_policy",
        "hw_cpu_thread_policy",
        Treatment.EMULATED,
        "best effort, as in Nova: the kubelet CPU manager picks the pCPUs",
    )


def emulator_threads(d: Draft) -> None:
    picked = d.pick("hw:emulator_threads_policy", None)
    if picked is None:
        return
    if picked.value not in ("share", "isolate"):
        raise Invalid(
            "CPU emulator threads option requested is invalid, given: "
            f"'{picked.value}', available: 'share, isolate'."
        )
    if not d.dedicated:
        raise Invalid(
            "An isolated CPU emulator threads option requires a dedicated CPU policy option."
        )
    if picked.value == "isolate":
        d.put("cpu.isolateEmulatorThread", True)
        d.record(picked, Treatment.APPLIED)
    else:
        d.record(picked, Treatment.EMULATED, "emulator threads run on the guest's pinned CPUs")


def _topology_value(d: Draft, name: str) -> int | None:
    picked = d.pick(f"hw:cpu_{name}", f"hw_cpu_{name}")
    if picked is None:
        return None
    if not picked.value.isdigit() or int(picked.value) < 1:
        raise Invalid(
            f"Invalid {picked.key} value '{picked.value}': a positive integer is required"
        )
    d.record_both(f"hw:cpu_{name}", f"hw_cpu_{name}", Treatment.APPLIED)
    return int(picked.value)


def cpu_topology(d: Draft) -> None:
    vcpus = d.flavor.vcpus
    sockets, cores, threads = (_topology_value(d, n) for n in ("sockets", "cores", "threads"))
    threads = threads or 1
    if sockets is None and cores is None:
        sockets, cores = max(vcpus // threads, 1), 1
    elif sockets is None:
        sockets = max(vcpus // ((cores or 1) * threads), 1)
    elif cores is None:
        cores = max(vcpus // (sockets * threads), 1)
    assert cores is not None
    if sockets * cores * threads != vcpus:
        raise Invalid(
            f"Cannot fit {vcpus} vCPUs into a topology of sockets={sockets}, cores={cores}, "
            f"threads={threads}"
        )
    d.put("cpu.sockets", sockets)
    d.put("cpu.cores", cores)
    d.put("cpu.threads", threads)
    max_sockets = d.pick("hw:cpu_max_sockets", "hw_cpu_max_sockets")
    if max_sockets is not None and max_sockets.value.isdigit():
        d.put("cpu.maxSockets", max(int(max_sockets.value), sockets))
        d.record_both("hw:cpu_max_sockets", "hw_cpu_max_sockets", Treatment.APPLIED)


def cpu_realtime(d: Draft) -> None:
    picked = d.pick("hw:cpu_realtime", None)
    if picked is None or not truthy(picked.value):
        if picked is not None:
            d.record(picked, Treatment.APPLIED)
        return
    if not d.dedicated:
        raise Invalid("Cannot set realtime policy in a non dedicated cpu pinning policy")
    mask = d.pick("hw:cpu_realtime_mask", "hw_cpu_realtime_mask")
    isolated = d.domain.get("cpu", {}).get("isolateEmulatorThread", False)
    if mask is None and not isolated:
        raise Invalid(
            "Use of realtime CPUs requires either one or more non-realtime CPU(s) or "
            "offloaded emulator threads."
        )
    realtime: dict[str, str] = {}
    if mask is not None:
        text = mask.value.replace(" ", "")
        realtime["mask"] = f"0-{d.flavor.vcpus - 1},{text}" if text.startswith("^") else text
        d.record_both("hw:cpu_realtime_mask", "hw_cpu_realtime_mask", Treatment.APPLIED)
    d.put("cpu.realtime", realtime)
    d.record(picked, Treatment.APPLIED)


# Placement trait suffix -> QEMU/libvirt CPU flag where the lower-cased suffix is not the flag.
_FLAG_NAMES = {
    "SSE41": "sse4.1",
    "SSE42": "sse4.2",
    "AESNI": "aes",
    "CLMUL": "pclmulqdq",
    "FMA3": "fma",
    "INTEL_VMX": "vmx",
    "AMD_SVM": "svm",
    "INTEL_PCID": "pcid",
    "INTEL_SPEC_CTRL": "spec-ctrl",
    "INTEL_SSBD": "ssbd",
    "AMD_SSBD": "amd-ssbd",
    "AMD_VIRT_SSBD": "virt-ssbd",
    "AMD_NO_SSB": "amd-no-ssb",
    "AMD_IBPB": "ibpb",
    "INTEL_MD_CLEAR": "md-clear",
    "AVX512VPCLMULQDQ": "vpclmulqdq",
    "AVX512VAES": "vaes",
    "AVX512GFNI": "gfni",
    "AMXBF16": "amx-bf16",
    "AMXINT8": "amx-int8",
    "AMXTILE": "amx-tile",
}
_CPU_TRAIT = re.compile(r"^trait\d*:HW_CPU_X86_(?P<flag>[A-Z0-9_]+)$")


def cpu_features(d: Draft) -> None:
    for key in sorted(d.specs):
        match = _CPU_TRAIT.match(key)
        if match is None or match["flag"] in ("AMD_SEV", "AMD_SEV_ES", "AMD_SEV_SNP", "INTEL_TDX"):
            continue
        value = d.specs[key]
        flag = _FLAG_NAMES.get(match["flag"], match["flag"].lower())
        policy = {"required": "require", "forbidden": "forbid"}.get(value)
        if policy is None:
            continue
        d.append("cpu.features", {"name": flag, "policy": policy})
        d.record(Picked(key, value, FLAVOR), Treatment.APPLIED, f"guest CPU feature {flag}")


_PAGE_KIB = re.compile(r"^(?P<num>\d+)\s*(?P<unit>[KMG]?)B?$", re.IGNORECASE)
_UNIT_KIB = {"": 1, "K": 1, "M": 1024, "G": 1024 * 1024}


def _page_size(d: Draft, picked: Picked) -> str | None:
    """KubeVirt pageSize for a Nova page size value (None: small pages)."""
    value = picked.value.strip().lower()
    if value in ("small", "any"):
        return None
    if value == "large":
        return d.settings.default_hugepage_size
    match = _PAGE_KIB.match(value)
    if match is None:
        raise Invalid(f"Invalid memory page size '{picked.value}'")
    kib = int(match["num"]) * _UNIT_KIB[match["unit"].upper()]
    sizes = {4: None, 2048: "2Mi", 1024 * 1024: "1Gi"}
    if kib not in sizes:
        raise d.refuse(picked, "KubeVirt guests use 4KiB, 2MiB or 1GiB pages")
    return sizes[kib]


def mem_page_size(d: Draft) -> None:
    flavor, image = d.pick("hw:mem_page_size", None), d.pick(None, "hw_mem_page_size")
    if image is not None and (flavor is None or flavor.value not in ("large", "any")):
        against = flavor.value if flavor is not None else "<empty>"
        raise Invalid(f"Page size {image.value} forbidden against '{against}'")
    chosen = image or flavor
    if chosen is None:
        return
    size = _page_size(d, chosen)
    if size is None:
        note = "no hugepages" + (" (any: small pages chosen)" if chosen.value == "any" else "")
        d.record_both("hw:mem_page_size", "hw_mem_page_size", Treatment.APPLIED, note)
        return
    if d.flavor.memory_mb % (1024 if size == "1Gi" else 2):
        raise d.refuse(chosen, f"{d.flavor.memory_mb}MiB of RAM is not a multiple of {size}")
    d.hugepages = True
    d.put("memory.hugepages.pageSize", size)
    d.record_both("hw:mem_page_size", "hw_mem_page_size", Treatment.APPLIED)


def numa(d: Draft) -> None:
    explicit = sorted(k for k in (*d.specs, *d.props) if re.match(r"^hw[:_]numa_(cpus|mem)\.", k))
    if explicit:
        key = explicit[0]
        source = FLAVOR if key in d.specs else IMAGE
        value = (d.specs if source == FLAVOR else d.props)[key]
        raise d.refuse(
            Picked(key, value, source), "explicit guest NUMA layouts are not expressible"
        )
    flavor, image = d.pick("hw:numa_nodes", None), d.pick(None, "hw_numa_nodes")
    if flavor is not None and image is not None and flavor.value != image.value:
        raise Invalid(
            "Image property 'hw_numa_nodes' is not permitted to override NUMA properties set "
            "against the flavor"
        )
    chosen = flavor or image
    if chosen is None:
        return
    if chosen.value == "1":
        d.record_both("hw:numa_nodes", "hw_numa_nodes", Treatment.APPLIED, "one guest NUMA node")
        return
    if not (d.dedicated and d.hugepages):
        raise d.refuse(chosen, "several guest NUMA nodes need dedicated CPUs and hugepages")
    d.put("cpu.numa.guestMappingPassthrough", {})
    d.record_both(
        "hw:numa_nodes",
        "hw_numa_nodes",
        Treatment.EMULATED,
        "guestMappingPassthrough: the guest mirrors the host NUMA cells of its pinned CPUs",
    )


def cpu_quota(d: Draft) -> None:
    quota, period = d.pick("quota:cpu_quota", None), d.pick("quota:cpu_period", None)
    if quota is None:
        return
    period_us = int(period.value) if period is not None else 100000
    if int(quota.value) <= 0:
        d.record(quota, Treatment.APPLIED, "no limit")
        return
    millicores = d.flavor.vcpus * int(quota.value) * 1000 // period_us
    d.put("resources.limits.cpu", f"{millicores}m")
    d.record(quota, Treatment.APPLIED, "resources.limits.cpu")
    if period is not None:
        d.record(period, Treatment.APPLIED, "resources.limits.cpu")


RULES: tuple[Rule, ...] = (
    cpu_policy,
    cpu_thread_policy,
    emulator_threads,
    cpu_topology,
    cpu_realtime,
    cpu_features,
    mem_page_size,
    numa,
    cpu_quota,
)
