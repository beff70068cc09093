"""Guest diagnostics and host uptime read from KubeVirt objects; pure functions.

Used by the KubeVirt driver (devices.py, driver.py). KubeVirt exposes no per-device counters
through its API objects, so counters are None (unknown), never invented; what it does expose:
the VMI's running timestamp (guest uptime), its interfaces' MACs (``status.interfaces``), the
guest agent's OS info (``status.guestOSInfo``) when the agent runs, and the Node's Ready
condition (the host's uptime is measured from its last transition to Ready).
"""

from __future__ import annotations

from datetime import datetime

from openkeel.domain.states import PowerState
from openkeel.virt.kubevirt.base import vm_cpus, vm_memory_mb
from openkeel.virt.kubevirt.client import JsonObj
from openkeel.virt.model import (
    CpuDiagnostics,
    Diagnostics,
    DiskDiagnostics,
    JsonValue,
    NicDiagnostics,
)


def _timestamp(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def running_since(vmi: JsonObj | None) -> datetime | None:
    """When the VMI last entered phase Running (``status.phaseTransitionTimestamps``)."""
    if not vmi or vmi.get("status", {}).get("phase") != "Running":
        return None
    stamps = vmi["status"].get("phaseTransitionTimestamps", [])
    found = [_timestamp(s.get("phaseTransitionTimestamp")) for s in stamps if s.get("phase") == "Running"]  # fmt: skip
    known = [f for f in found if f is not None]
    return max(known) if known else None


def ready_since(node: JsonObj) -> datetime | None:
    """When the Node last became Ready (None: not Ready, or not reported)."""
    for condition in node.get("status", {}).get("conditions", []):
        if condition.get("type") == "Ready" and condition.get("status") == "True":
            return _timestamp(condition.get("lastTransitionTime"))
    return None


def _source(vm: JsonObj, vmi: JsonObj | None) -> JsonObj:
    spec: JsonObj = vmi["spec"] if vmi else vm["spec"]["template"]["spec"]
    return spec


def _macs(vm: JsonObj, vmi: JsonObj | None) -> list[str | None]:
    reported = (vmi or {}).get("status", {}).get("interfaces", [])
    if reported:
        return [i.get("mac") for i in reported]
    devices = _source(vm, vmi).get("domain", {}).get("devices", {})
    return [i.get("macAddress") for i in devices.get("interfaces", []) if i.get("state") != "absent"]  # fmt: skip


def instance_diagnostics(
    vm: JsonObj, vmi: JsonObj | None, state: PowerState, now: datetime
) -> Diagnostics:
    """Nova's standard diagnostics of a KubeVirt guest (libvirt/KVM inside virt-launcher)."""
    source = _source(vm, vmi)
    domain = source.get("domain", {})
    disks = domain.get("devices", {}).get("disks", [])
    since = running_since(vmi)
    cpus = vm_cpus(domain)
    return Diagnostics(
        state=state.notification_name,
        driver="libvirt",
        hypervisor="kvm",
        hypervisor_os="linux",
        uptime=int((now - since).total_seconds()) if since else None,
        config_drive=any("cloudInitConfigDrive" in v for v in source.get("volumes", [])),
        num_cpus=cpus,
        num_nics=len(_macs(vm, vmi)),
        num_disks=len(disks),
        memory_mb=vm_memory_mb(domain),
        cpu_details=tuple(CpuDiagnostics(id=i) for i in range(cpus)),
        nic_details=tuple(NicDiagnostics(mac_address=mac) for mac in _macs(vm, vmi)),
        disk_details=tuple(DiskDiagnostics() for _ in disks),
    )


def legacy_diagnostics(vm: JsonObj, vmi: JsonObj | None, now: datetime) -> dict[str, JsonValue]:
    """The pre-2.48 driver-specific answer: what the VM/VMI objects report, flat."""
    source = _source(vm, vmi)
    domain = source.get("domain", {})
    status = (vmi or {}).get("status", {})
    found: dict[str, JsonValue] = {
        "phase": status.get("phase"),
        "node": status.get("nodeName"),
        "memory": vm_memory_mb(domain) * 1024,
        "vcpus": vm_cpus(domain),
    }
    since = running_since(vmi)
    if since is not None:
        found["uptime"] = int((now - since).total_seconds())
    for index, mac in enumerate(_macs(vm, vmi)):
        found[f"nic{index}_mac"] = mac
    guest = status.get("guestOSInfo") or {}
    for key in ("name", "version", "kernelRelease"):
        if guest.get(key):
            found[f"guest_os_{key}"] = guest[key]
    return found
