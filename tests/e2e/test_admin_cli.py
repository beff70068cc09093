"""The unchanged ``nova`` CLI's admin commands against the all-in-one: diagnostics in both
formats, hypervisor uptime and the service list (novaclient has no host commands any more:
``openstack host`` is in test_openstack_cli.py)."""

from __future__ import annotations

from openkeel.db.image_catalog import DEFAULT_IMAGE
from tests.e2e.conftest import RunningCloud
from tests.e2e.test_python_clients import nova_cli


def test_nova_cli_admin_commands(cloud: RunningCloud) -> None:
    nova_cli(cloud, "boot", "--flavor", "m1.tiny", "--image", DEFAULT_IMAGE.name,
             "--nic", "none", "--poll", "nova-admin-vm")  # fmt: skip
    try:
        legacy = nova_cli(cloud, "--os-compute-api-version", "2.1", "diagnostics", "nova-admin-vm")
        assert "| memory" in legacy and "cpu0_time" in legacy
        standard = nova_cli(cloud, "--os-compute-api-version", "2.48", "diagnostics", "nova-admin-vm")  # fmt: skip
        assert "| state" in standard and "running" in standard and "libvirt" in standard
        listed = nova_cli(cloud, "--os-compute-api-version", "2.87", "hypervisor-list")
        row = next(line for line in listed.splitlines() if " up " in line)
        # | ID (a uuid from 2.53) | Hypervisor hostname | State | Status |
        hypervisor_id = row.split("|")[1].strip()
        uptime = nova_cli(cloud, "--os-compute-api-version", "2.87", "hypervisor-uptime", hypervisor_id)  # fmt: skip
        assert " up " in uptime and "load average" in uptime
        services = nova_cli(cloud, "service-list")
        assert "nova-conductor" in services and "nova-scheduler" in services
    finally:
        nova_cli(cloud, "delete", "nova-admin-vm")
