"""Extra specs / image properties: what is applied, emulated, ignored, and the 400s."""

from __future__ import annotations

import dataclasses

import pytest

from openkeel.domain.errors import Invalid
from openkeel.virt.kubevirt.manifests.extra_specs import Treatment, UnsupportedFeature
from openkeel.virt.kubevirt.manifests.resolution import resolve
from tests.virt.kubevirt.samples import SETTINGS, flavor, image


def _resolve(specs: dict[str, str] | None = None, **props: str):  # type: ignore[no-untyped-def]
    return resolve(flavor(**(specs or {})), image(**props), SETTINGS)


@pytest.mark.parametrize(
    ("specs", "props", "message"),
    [
        (
            {"hw:cpu_policy": "mixed"},
            {},
            "Flavor extra spec hw:cpu_policy=mixed is not supported by the KubeVirt driver: "
            "KubeVirt pins all vCPUs or none (no mixed policy)",
        ),
        (
            {"hw:numa_nodes": "2", "hw:numa_cpus.0": "0", "hw:numa_mem.0": "1024"},
            {},
            "Flavor extra spec hw:numa_cpus.0=0 is not supported by the KubeVirt driver: "
            "explicit guest NUMA layouts are not expressible",
        ),
        (
            {"hw:numa_nodes": "2"},
            {},
            "Flavor extra spec hw:numa_nodes=2 is not supported by the KubeVirt driver: "
            "several guest NUMA nodes need dedicated CPUs and hugepages",
        ),
        (
            {"hw:watchdog_action": "pause"},
            {},
            "Flavor extra spec hw:watchdog_action=pause is not supported by the KubeVirt "
            "driver: the i6300esb watchdog can only reset, power off or shut down",
        ),
        (
            {},
            {"hw_machine_type": "pc-i440fx-2.11"},
            "Image property hw_machine_type=pc-i440fx-2.11 is not supported by the KubeVirt "
            "driver: KubeVirt supports q35 machine types on x86 (no i440fx/pc)",
        ),
        (
            {},
            {"os_secure_boot": "required"},
            "Image property os_secure_boot=required is not supported by the KubeVirt driver: "
            "secure boot requires hw_firmware_type=uefi",
        ),
        (
            {"hw:serial_port_count": "2"},
            {},
            "Flavor extra spec hw:serial_port_count=2 is not supported by the KubeVirt driver: "
            "KubeVirt provides a single serial console",
        ),
        (
            {"hw:viommu_model": "intel"},
            {},
            "Flavor extra spec hw:viommu_model=intel is not supported by the KubeVirt driver: "
            "no vIOMMU in KubeVirt guests",
        ),
        (
            {"hw:tpm_version": "1.2"},
            {},
            "Flavor extra spec hw:tpm_version=1.2 is not supported by the KubeVirt driver: "
            "KubeVirt emulates TPM 2.0 only",
        ),
        (
            {},
            {"hw_disk_bus": "fdc"},
            "Image property hw_disk_bus=fdc is not supported by the KubeVirt driver: "
            "KubeVirt buses are sata, scsi, usb, virtio",
        ),
        (
            {"pci_passthrough:alias": "a1:2"},
            {},
            "Flavor extra spec pci_passthrough:alias=a1:2 is not supported by the KubeVirt "
            "driver: no [kubevirt] pci_alias_resources entry for 'a1'",
        ),
    ],
)
def test_refused_with_clear_400(specs: dict[str, str], props: dict[str, str], message: str) -> None:
    with pytest.raises(UnsupportedFeature) as caught:
        _resolve(specs, **props)
    assert caught.value.message == message
    assert caught.value.code == 400


@pytest.mark.parametrize(
    ("specs", "props", "message"),
    [
        (
            {"hw:cpu_policy": "shared"},
            {"hw_cpu_policy": "dedicated"},
            "Image property 'hw_cpu_policy' is not permitted to override CPU pinning policy "
            "set against the flavor",
        ),
        ({}, {"hw_mem_page_size": "2MB"}, "Page size 2MB forbidden against '<empty>'"),
        (
            {"hw:mem_page_size": "small"},
            {"hw_mem_page_size": "large"},
            "Page size large forbidden against 'small'",
        ),
        ({"hw:mem_page_size": "huge"}, {}, "Invalid memory page size 'huge'"),
        (
            {"hw:cpu_thread_policy": "prefer"},
            {},
            "Cannot set cpu thread pinning policy in a non dedicated cpu pinning policy",
        ),
        (
            {"hw:emulator_threads_policy": "isolate"},
            {},
            "An isolated CPU emulator threads option requires a dedicated CPU policy option.",
        ),
        (
            {"hw:cpu_realtime": "yes"},
            {},
            "Cannot set realtime policy in a non dedicated cpu pinning policy",
        ),
        (
            {"hw:watchdog_action": "explode"},
            {},
            "Provided watchdog action (explode) is not supported.",
        ),
        (
            {"os:secure_boot": "required"},
            {"os_secure_boot": "disabled", "hw_firmware_type": "uefi"},
            "Conflicting values for secure_boot found in the flavor (required) and the image "
            "(disabled).",
        ),
        (
            {"hw:cpu_sockets": "3"},
            {},
            "Cannot fit 2 vCPUs into a topology of sockets=3, cores=1, threads=1",
        ),
    ],
)
def test_nova_rejections_keep_nova_messages(
    specs: dict[str, str], props: dict[str, str], message: str
) -> None:
    with pytest.raises(Invalid) as caught:
        _resolve(specs, **props)
    assert caught.value.message == message


def test_outcomes_report_applied_emulated_ignored() -> None:
    result = _resolve(
        {
            "hw:cpu_policy": "dedicated",
            "hw:cpu_thread_policy": "prefer",
            "quota:disk_read_bytes_sec": "10240",
            "trait:HW_CPU_X86_AVX2": "required",
            "trait:COMPUTE_STATUS_DISABLED": "forbidden",
            "custom:thing": "1",
        },
        hw_disk_bus="ide",
        os_distro="ubuntu",
        owner_specified_checksum="abc",
    )
    summary = {o.key: (o.source, o.treatment) for o in result.outcomes}
    assert summary == {
        "hw:cpu_policy": ("flavor", Treatment.APPLIED),
        "hw:cpu_thread_policy": ("flavor", Treatment.EMULATED),
        "quota:disk_read_bytes_sec": ("flavor", Treatment.IGNORED),
        "trait:HW_CPU_X86_AVX2": ("flavor", Treatment.APPLIED),
        "trait:COMPUTE_STATUS_DISABLED": ("flavor", Treatment.IGNORED),
        "hw_disk_bus": ("image", Treatment.EMULATED),
        "os_distro": ("image", Treatment.IGNORED),
    }
    assert result.domain["cpu"]["features"] == [{"name": "avx2", "policy": "require"}]
    assert result.disk_bus == "sata"


def test_refused_key_turned_off_is_ignored() -> None:
    result = _resolve({"hw:ephemeral_encryption": "false"})
    outcome = result.outcome("hw:ephemeral_encryption")
    assert outcome is not None and outcome.treatment == Treatment.IGNORED


def test_legacy_glance_names_are_understood() -> None:
    result = _resolve(architecture="aarch64")
    assert result.template == {"architecture": "arm64"}


def test_rng_needs_flavor_permission() -> None:
    result = _resolve({"hw_rng:allowed": "False"}, hw_rng_model="virtio")
    assert "rng" not in result.domain.get("devices", {})
    outcome = result.outcome("hw_rng_model")
    assert outcome is not None and outcome.treatment == Treatment.IGNORED


def test_vgpu_and_pci_with_configured_resources() -> None:
    settings = dataclasses.replace(
        SETTINGS,
        pci_alias_resources={"nic": "intel.com/xl710"},
        vgpu_resource_name="nvidia.com/GRID",
    )
    fl = flavor(**{"pci_passthrough:alias": "nic:2", "resources:VGPU": "1"})
    devices = resolve(fl, None, settings).domain["devices"]
    assert devices["hostDevices"] == [
        {"name": "pci-0-0", "deviceName": "intel.com/xl710"},
        {"name": "pci-0-1", "deviceName": "intel.com/xl710"},
    ]
    assert devices["gpus"] == [{"name": "vgpu0", "deviceName": "nvidia.com/GRID"}]


def test_cpu_quota_becomes_limit() -> None:
    result = _resolve({"quota:cpu_quota": "50000", "quota:cpu_period": "100000"})
    assert result.domain["resources"] == {"limits": {"cpu": "1000m"}}
