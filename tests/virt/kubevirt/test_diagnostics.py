"""KubeVirt diagnostics and host uptime from API objects (pure): what the VMI and Node report,
None where KubeVirt reports nothing."""

from __future__ import annotations

from datetime import UTC, datetime

from openkeel.domain.states import PowerState
from openkeel.virt.kubevirt.diagnostics import (
    instance_diagnostics,
    legacy_diagnostics,
    ready_since,
)
from openkeel.virt.uptime import uptime_line

NOW = datetime(2026, 1, 3, 10, 0, 0, tzinfo=UTC)
DOMAIN = {
    "cpu": {"cores": 2},
    "memory": {"guest": "1Gi"},
    "devices": {"disks": [{"name": "root"}, {"name": "config"}],
                "interfaces": [{"name": "p1", "macAddress": "fa:16:3e:00:00:01"}]},
}  # fmt: skip
VM = {"spec": {"template": {"spec": {"domain": DOMAIN, "volumes": [{"cloudInitConfigDrive": {}}]}}}}
VMI = {
    "spec": {"domain": DOMAIN, "volumes": [{"cloudInitConfigDrive": {}}]},
    "status": {
        "phase": "Running",
        "nodeName": "node-1",
        "phaseTransitionTimestamps": [
            {"phase": "Scheduled", "phaseTransitionTimestamp": "2026-01-03T09:00:00Z"},
            {"phase": "Running", "phaseTransitionTimestamp": "2026-01-03T09:59:00Z"},
        ],
        "interfaces": [{"name": "p1", "mac": "fa:16:3e:00:00:01"}],
        "guestOSInfo": {"name": "Ubuntu", "kernelRelease": "6.8.0"},
    },
}


def test_standard_diagnostics_of_a_running_vmi() -> None:
    diag = instance_diagnostics(VM, VMI, PowerState.RUNNING, NOW)
    assert (diag.state, diag.driver, diag.uptime, diag.config_drive) == ("running", "libvirt", 60, True)  # fmt: skip
    assert (diag.num_cpus, diag.num_disks, diag.num_nics, diag.memory_mb) == (2, 2, 1, 1024)
    assert [c.id for c in diag.cpu_details] == [0, 1] and diag.cpu_details[0].time is None
    assert [n.mac_address for n in diag.nic_details] == ["fa:16:3e:00:00:01"]


def test_a_stopped_vm_has_no_uptime() -> None:
    diag = instance_diagnostics(VM, None, PowerState.SHUTDOWN, NOW)
    assert (diag.state, diag.uptime, diag.num_nics) == ("shutdown", None, 1)


def test_legacy_diagnostics_are_what_the_objects_say() -> None:
    found = legacy_diagnostics(VM, VMI, NOW)
    assert found == {
        "phase": "Running", "node": "node-1", "memory": 1024 * 1024, "vcpus": 2, "uptime": 60,
        "nic0_mac": "fa:16:3e:00:00:01", "guest_os_name": "Ubuntu", "guest_os_kernelRelease": "6.8.0",
    }  # fmt: skip


def test_node_uptime_counts_from_ready() -> None:
    ready = {"status": {"conditions": [
        {"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-01T07:56:00Z"}]}}  # fmt: skip
    since = ready_since(ready)
    assert since is not None
    assert uptime_line(NOW, since) == " 10:00:00 up 2 days,  2:04,  0 users,  load average: unknown"
    assert uptime_line(NOW, NOW, users=1, load=(0.5, 0.25, 0)) == (
        " 10:00:00 up 0 min,  1 user,  load average: 0.50, 0.25, 0.00"
    )
    assert ready_since({"status": {"conditions": [{"type": "Ready", "status": "False"}]}}) is None
    assert ready_since({"status": {"conditions": [{"type": "Ready", "status": "True"}]}}) is None
