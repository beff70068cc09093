"""Golden-file tests: each Nova -> KubeVirt mapping gives exactly the recorded objects.

Every generated object is also validated against the KubeVirt/CDI schemas. Regenerate the files
after an intended change with ``OPENKEEL_REGEN_GOLDEN=1 pytest tests/virt/kubevirt -q`` and
review the diff.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from openkeel.virt.kubevirt.manifests import disks, instancetype, vm
from openkeel.virt.kubevirt.manifests.inputs import GuestExtras
from tests.virt.kubevirt import samples
from tests.virt.kubevirt.samples import EXTRAS, NET_B, SETTINGS, flavor, image, port, server
from tests.virt.kubevirt.schema_validator import validate

GOLDEN = Path(__file__).parent / "golden"
REGEN = os.environ.get("OPENKEEL_REGEN_GOLDEN") == "1"

CASES: dict[str, Any] = {
    "basic": lambda: vm.build_server(server(), SETTINGS),
    "dedicated_cpus": lambda: vm.build_server(
        server(
            flavor=flavor(
                **{
                    "hw:cpu_policy": "dedicated",
                    "hw:emulator_threads_policy": "isolate",
                    "hw:cpu_thread_policy": "prefer",
                    "hw:cpu_sockets": "1",
                    "hw:cpu_realtime": "yes",
                    "hw:cpu_realtime_mask": "^0",
                }
            )
        ),
        SETTINGS,
    ),
    "hugepages": lambda: vm.build_server(
        server(flavor=flavor(**{"hw:mem_page_size": "large"}), image=image(hw_mem_page_size="1GB")),
        SETTINGS,
    ),
    "numa": lambda: vm.build_server(
        server(
            flavor=flavor(
                **{"hw:numa_nodes": "2", "hw:cpu_policy": "dedicated", "hw:mem_page_size": "2MB"}
            )
        ),
        SETTINGS,
    ),
    "uefi_secure_boot": lambda: vm.build_server(
        server(image=image(hw_firmware_type="uefi", os_secure_boot="required")), SETTINGS
    ),
    "machine_type": lambda: vm.build_server(
        server(image=image(hw_machine_type="pc-q35-rhel9.4.0", hw_architecture="x86_64")),
        SETTINGS,
    ),
    "watchdog": lambda: vm.build_server(
        server(flavor=flavor(**{"hw:watchdog_action": "poweroff"})), SETTINGS
    ),
    "rng": lambda: vm.build_server(server(image=image(hw_rng_model="virtio")), SETTINGS),
    "video": lambda: vm.build_server(
        server(image=image(hw_video_model="virtio", hw_pointer_model="usbtablet")), SETTINGS
    ),
    "video_none": lambda: vm.build_server(server(image=image(hw_video_model="none")), SETTINGS),
    "disk_and_nic_bus": lambda: vm.build_server(
        server(
            image=image(hw_disk_bus="scsi", hw_scsi_model="virtio-scsi", hw_vif_model="e1000e"),
            flavor=flavor(**{"hw:vif_multiqueue_enabled": "true"}),
        ),
        SETTINGS,
    ),
    "serial_console_off": lambda: vm.build_server(
        server(flavor=flavor(**{"hw:serial_port_count": "0"})), SETTINGS
    ),
    "containerdisk": lambda: vm.build_server(
        server(),
        dataclasses.replace(
            SETTINGS,
            image_source_policy="containerdisk",
            containerdisk_registry="registry.example/images",
        ),
    ),
    "config_drive": lambda: vm.build_server(server(config_drive=True), SETTINGS, EXTRAS),
    "nocloud_key_pair": lambda: vm.build_server(server(), SETTINGS, EXTRAS),
    "guest_agent_password": lambda: vm.build_server(
        server(image=image(hw_qemu_guest_agent="yes")), SETTINGS, EXTRAS
    ),
    "config_drive_two_nics": lambda: vm.build_server(
        server(config_drive=True, network=(port(1), port(2, NET_B))), SETTINGS, EXTRAS
    ),
    # The compute role built the drive's files: network_data.json is the metadata service's.
    "config_drive_from_metadata": lambda: vm.build_server(
        server(config_drive=True, config_drive_files=samples.drive_files()), SETTINGS, EXTRAS
    ),
    "nocloud_two_nics": lambda: vm.build_server(
        server(network=(port(1), port(2, NET_B))), SETTINGS, EXTRAS
    ),
    "boot_from_volume": lambda: vm.build_server(
        server(image=None, block_devices=samples.BOOT_FROM_VOLUME, network=()), SETTINGS
    ),
    "ephemeral_and_swap": lambda: vm.build_server(
        server(flavor=dataclasses.replace(flavor(), ephemeral_gb=10, swap_mb=512)), SETTINGS
    ),
    "instancetype": lambda: vm.build_server(
        server(flavor=flavor(**{"hw:cpu_policy": "dedicated", "hw:mem_page_size": "2MB"})),
        dataclasses.replace(SETTINGS, use_instancetypes=True),
        node_name="worker-3",
    ),
}


def _objects(case: str) -> list[dict[str, Any]]:
    result = CASES[case]()
    objects: list[dict[str, Any]] = result.objects()
    return objects


def _check_golden(name: str, document: Any) -> None:
    path = GOLDEN / f"{name}.yaml"
    text = yaml.safe_dump(document, sort_keys=True, width=100)
    if REGEN or not path.exists():
        path.write_text(text)
        if not REGEN:
            pytest.fail(f"golden file {path.name} was missing and has been written; re-run")
    assert yaml.safe_load(path.read_text()) == document, f"{path.name} differs"


@pytest.mark.parametrize("case", sorted(CASES))
def test_golden_and_schema_valid(case: str) -> None:
    objects = _objects(case)
    for obj in objects:
        assert validate(obj) == [], f"{obj['kind']} {obj['metadata']['name']}"
    _check_golden(case, objects)


def test_cluster_instancetype_golden() -> None:
    fl = flavor(**{"hw:cpu_policy": "dedicated", "hw:mem_page_size": "2MB"})
    obj = instancetype.cluster_instancetype(fl, SETTINGS)
    assert validate(obj) == []
    _check_golden("cluster_instancetype", obj)


def test_image_import_golden() -> None:
    objects = disks.image_import(image(), "https://glance.example/v2/images/x/file", SETTINGS)
    for obj in objects:
        assert validate(obj) == []
    _check_golden("image_import", objects)


def test_builds_are_deterministic() -> None:
    assert _objects("config_drive_two_nics") == _objects("config_drive_two_nics")


def test_extras_default_to_none() -> None:
    assert (
        vm.build_server(server(), SETTINGS, GuestExtras()).vm
        == vm.build_server(server(), SETTINGS).vm
    )
