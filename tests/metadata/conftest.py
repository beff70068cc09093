"""A cloud (API, conductor, scheduler, one simulated compute host with a data directory) and
the metadata service over its databases; cloud-init's own code as the guest's reader.

cloud-init is not on PyPI: scripts/install-cloud-init.sh unpacks its Debian package into the
venv. Without it the cloud-init tests skip locally and fail under CI.
"""

from __future__ import annotations

import base64
import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from openkeel.clients.placement_embedded import EmbeddedPlacement
from openkeel.cmd.metadata import guest_records
from openkeel.db.repositories import instances
from openkeel.metadata.app import MetadataApp, MetadataSettings
from openkeel.metadata.identify import signature
from openkeel.runtime.clock import FakeClock
from openkeel.virt.config_drive import ISO9660, VFAT, read_iso, read_vfat, vfat_label, volume_label
from openkeel.virt.fake import FakeDriver
from openkeel.virt.fake_config import FakeDriverConfig
from tests.client import ApiClient
from tests.conftest import CELL1_UUID, make_services
from tests.functional.conftest import Cloud, start_cloud, stop_cloud

SECRET = "proxy-secret"
PUBLIC_KEY = (
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGnHvlzBvGgtNfpSGaWHCuxY3n5W3K9tD3kK6m9o4Rbq test@host"
)
USER_DATA = b"#cloud-config\nruncmd:\n - echo hello\n"
FIXED_IP = "10.0.0.5"
MAC = "fa:16:3e:12:34:56"


def cloudinit_or_skip() -> None:
    """cloud-init's datasource code, or a skip (a failure under CI)."""
    try:
        import cloudinit.sources.helpers.openstack  # noqa: F401
    except ImportError:
        message = "cloud-init not importable: run scripts/install-cloud-init.sh"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


def vif(port_id: str = "b3a1c6d0-5f1e-4a8e-9d2c-1e5f0a9b8c7d") -> dict[str, Any]:
    """One port in Nova's network model (a static IPv4 subnet with a gateway and DNS)."""
    return {
        "id": port_id, "address": MAC, "type": "ovs", "devname": f"tap{port_id[:11]}",
        "vnic_type": "normal",
        "network": {
            "id": "3b9bc1d4-7b0a-4c41-8f2b-0d0a6e1c0001", "label": "private",
            "meta": {"mtu": 1450},
            "subnets": [{
                "cidr": "10.0.0.0/24", "version": 4, "meta": {},
                "gateway": {"address": "10.0.0.1", "type": "gateway", "version": 4},
                "dns": [{"address": "10.0.0.2", "type": "dns", "version": 4}],
                "routes": [{"cidr": "192.168.7.0/24", "gateway": {"address": "10.0.0.254"}}],
                "ips": [{"address": FIXED_IP, "type": "fixed", "version": 4,
                         "floating_ips": [{"address": "172.24.4.9", "type": "floating"}]}],
            }],
        },
    }  # fmt: skip


class MetadataCloud:
    """The cloud, its compute host's instances directory and a way to build metadata apps."""

    def __init__(self, cloud: Cloud, instances_path: Path, drive_format: str = ISO9660) -> None:
        self.drive_format = drive_format
        self.cloud = cloud
        self.instances_path = instances_path
        self.clock = FakeClock()
        self._clients: list[ApiClient] = []

    def drive(self, sid: str) -> tuple[str, dict[str, bytes]]:
        """The label and the files of server ``sid``'s config drive, in either format."""
        path = self.instances_path / sid / "disk.config"
        if self.drive_format == VFAT:
            return vfat_label(path), read_vfat(path)
        image = path.read_bytes()
        return volume_label(image), read_iso(image)

    @property
    def conf(self) -> Any:
        return self.cloud.services.conf

    def metadata(self, client: tuple[str, int] = ("127.0.0.1", 40000), **options: Any) -> ApiClient:
        """A client of a new metadata service; ``options``: ``group.name`` overrides."""
        for dotted, value in options.items():
            group, _, name = dotted.rpartition(".")
            self.conf.set_override(name, value, group=group or None)
        services = self.cloud.services
        app = MetadataApp(guest_records(self.conf, services.api_db, services.cell_dbs),
                          MetadataSettings.from_conf(self.conf), clock=self.clock)  # fmt: skip
        api = ApiClient(app, base_url="http://169.254.169.254", client=client)
        self._clients.append(api)
        return api

    def boot(self, **extra: Any) -> str:
        """An ACTIVE server with a key pair, user data and metadata (no port: see
        :meth:`attach_network`)."""
        name = f"key-{uuid.uuid4().hex[:6]}"
        resp = self.cloud.api.post(
            "/v2.1/os-keypairs", {"keypair": {"name": name, "public_key": PUBLIC_KEY}}
        )
        assert resp.status_code == 200, resp.text
        body = {"key_name": name, "user_data": base64.b64encode(USER_DATA).decode(),
                "metadata": {"role": "web"}, "availability_zone": "nova", **extra}  # fmt: skip
        sid: str = self.cloud.boot("guest-1", **body)["id"]
        assert self.cloud.wait(sid)["status"] == "ACTIVE"
        return sid

    def attach_network(self, sid: str, network_info: list[dict[str, Any]] | None = None) -> None:
        """Give the server a port in its info cache, as the network allocation leaves it."""
        with self.cloud.services.cell_dbs[CELL1_UUID].begin() as conn:
            instances.set_network_info(conn, sid, network_info or [vif()])

    def project(self, sid: str) -> str:
        server = self.cloud.api.get(f"/v2.1/servers/{sid}").json()["server"]
        return str(server["tenant_id"])

    def proxy_headers(self, sid: str, secret: str = SECRET) -> dict[str, str]:
        """What Neutron's metadata proxy adds to a guest's request."""
        return self.proxy_headers_for(sid, self.project(sid), secret)

    @staticmethod
    def proxy_headers_for(sid: str, project: str, secret: str = SECRET) -> dict[str, str]:
        return {"X-Instance-ID": sid, "X-Tenant-ID": project,
                "X-Instance-ID-Signature": signature(secret, sid)}  # fmt: skip

    def close(self) -> None:
        for client in self._clients:
            client.close()


@pytest.fixture(scope="package")
def placement(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedPlacement]:
    embedded = EmbeddedPlacement(tmp_path_factory.mktemp("placement")).start()
    yield embedded
    embedded.stop()


@pytest.fixture
def md(
    tmp_path: Path, placement: EmbeddedPlacement, request: pytest.FixtureRequest
) -> Iterator[MetadataCloud]:
    """The cloud; ``indirect`` parametrization names the config drive format (iso9660)."""
    drive_format = getattr(request, "param", ISO9660)
    cloud = start_cloud(make_services(tmp_path), placement, f"inproc://md-{uuid.uuid4().hex[:8]}")
    instances_path = tmp_path / "instances"
    host = f"md-{uuid.uuid4().hex[:8]}"  # one Placement for the package: a provider per test
    config = FakeDriverConfig(
        nodes=(f"{host}-node",), instances_path=str(instances_path),
        config_drive_format=drive_format,
    )  # fmt: skip
    cloud.add_compute(host, driver=FakeDriver(config, sleep=lambda _s: None))
    built = MetadataCloud(cloud, instances_path, drive_format)
    yield built
    built.close()
    stop_cloud(cloud)


Factory = Callable[..., ApiClient]
