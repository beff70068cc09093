"""Sample InstanceSpecs for the KubeVirt manifest tests (one base server, varied per case)."""

from __future__ import annotations

import dataclasses
from typing import Any

from openkeel.domain.guest_metadata.record import GuestRecord
from openkeel.domain.guest_metadata.tree import MetadataTree
from openkeel.virt.kubevirt.manifests.inputs import GuestExtras, KeyPair, Route, Subnet
from openkeel.virt.kubevirt.manifests.settings import KubevirtSettings
from openkeel.virt.model import (
    BlockDevice,
    FlavorSpec,
    ImageSpec,
    InstanceRef,
    InstanceSpec,
    NetworkInterface,
)

SERVER_UUID = "3f2504e0-4f89-41d3-9a0c-0305e82c3301"
PROJECT_ID = "6f70656e737461636b20342065766572"
NET_A = "a1b2c3d4-0000-4000-8000-000000000001"
NET_B = "a1b2c3d4-0000-4000-8000-000000000002"
USER_DATA = "I2Nsb3VkLWNvbmZpZwpwYWNrYWdlczogW2h0b3BdCg=="  # "#cloud-config\npackages: [htop]\n"
PUBLIC_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGq3n3ZyZ3Y2 demo@example"

SETTINGS = KubevirtSettings(storage_class="fast-rbd")


def flavor(**extra_specs: str) -> FlavorSpec:
    return FlavorSpec(
        "42", "m1.medium", vcpus=2, memory_mb=2048, root_gb=20, extra_specs=extra_specs
    )


def image(**properties: str) -> ImageSpec:
    return ImageSpec(
        "9e1b7a48-7c39-4a3f-9b1a-5d2a3c4b5e6f",
        disk_format="qcow2",
        container_format="bare",
        size_bytes=1_073_741_824,
        properties=properties,
    )


def port(n: int, network_id: str = NET_A) -> NetworkInterface:
    return NetworkInterface(
        port_id=f"{n}d7c9f10-1111-4222-8333-00000000000{n}",
        network_id=network_id,
        mac_address=f"fa:16:3e:00:00:0{n}",
        fixed_ips=(f"10.0.{n}.10", f"fd00:{n}::10")
        if network_id == NET_B
        else (f"10.0.0.{10 + n}",),
        mtu=1450,
    )


def server(**changes: Any) -> InstanceSpec:
    base = InstanceSpec(
        ref=InstanceRef(SERVER_UUID, "instance-00000001", PROJECT_ID),
        hostname="web-1",
        user_id="9a8b7c6d5e4f",
        flavor=flavor(),
        image=image(),
        network=(port(1),),
        user_data=USER_DATA,
        metadata={"role": "web"},
        display_name="Web server #1",
        availability_zone="nova",
    )
    return dataclasses.replace(base, **changes)


SUBNETS = {
    NET_A: (Subnet("10.0.0.0/24", gateway="10.0.0.1", dns_nameservers=("10.0.0.2",)),),
    NET_B: (
        Subnet(
            "10.0.2.0/24",
            gateway="10.0.2.1",
            dns_nameservers=("8.8.8.8",),
            routes=(Route("192.168.0.0/16", "10.0.2.254"),),
            dhcp=False,
        ),
        Subnet("fd00:2::/64", gateway="fd00:2::1", dhcp=False),
    ),
}

EXTRAS = GuestExtras(key_pair=KeyPair("demo-key", PUBLIC_KEY), subnets=SUBNETS)

BOOT_FROM_VOLUME = (
    BlockDevice(
        "volume", "volume", 0, size_gb=30, volume_id="0c1d2e3f-aaaa-4bbb-8ccc-000000000001"
    ),
    BlockDevice("blank", "local", None, size_gb=5, guest_format="swap"),
    BlockDevice(
        "image",
        "volume",
        1,
        size_gb=10,
        volume_id="0c1d2e3f-aaaa-4bbb-8ccc-000000000002",
        device_type="cdrom",
        connection_info={"image_id": "77777777-7777-4777-8777-777777777777"},
    ),
    BlockDevice("blank", "volume", None, size_gb=50, delete_on_termination=True, tag="data"),
)


def drive_files() -> tuple[tuple[str, bytes], ...]:
    """Config drive files as the compute role builds them (no randomness: a fixed seed) for
    the base server on one port of NET_A."""
    vif = {
        "id": port(1).port_id, "address": port(1).mac_address, "type": "ovs",
        "devname": f"tap{port(1).port_id[:11]}",
        "network": {"id": NET_A, "meta": {"mtu": 1450}, "subnets": [{
            "cidr": "10.0.0.0/24", "version": 4, "meta": {},
            "gateway": {"address": "10.0.0.1"}, "dns": [{"address": "10.0.0.2"}], "routes": [],
            "ips": [{"address": "10.0.0.11", "type": "fixed", "version": 4}]}]},
    }  # fmt: skip
    record = GuestRecord(uuid=SERVER_UUID, project_id=PROJECT_ID, name="Web server #1",
                         hostname="web-1.novalocal", user_data=USER_DATA, network_info=(vif,))  # fmt: skip
    tree = MetadataTree(record, random_bytes=lambda n: bytes(n))
    return tuple(tree.config_drive_files())
