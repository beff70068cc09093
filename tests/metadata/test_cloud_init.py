"""cloud-init's own datasource code reads what OpenKeel serves: the metadata service over HTTP
(``DataSourceOpenStack.read_metadata_service``, behind a stand-in for Neutron's metadata
proxy) and the config drive image the simulated driver writes (``DataSourceConfigDrive`` on
the image's files); the network configuration cloud-init renders from network_data.json."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from openkeel.cmd.api import network_service
from openkeel.cmd.metadata import guest_records
from openkeel.metadata.app import MetadataApp, MetadataSettings
from openkeel.virt.config_drive import ISO9660, VFAT, read_iso
from tests.metadata.conftest import PUBLIC_KEY, USER_DATA, MetadataCloud, cloudinit_or_skip

PROXY = {"neutron.service_metadata_proxy": True, "neutron.metadata_proxy_shared_secret": "s3"}


class NeutronProxy:
    """What Neutron's metadata proxy does in front of Nova's service: add the guest's signed
    instance id and tenant to each request."""

    def __init__(self, app: Any, headers: dict[str, str]) -> None:
        self.app = app
        self.headers = [(k.lower().encode(), v.encode()) for k, v in headers.items()]

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            scope = {**scope, "headers": [*scope["headers"], *self.headers]}
        await self.app(scope, receive, send)


@pytest.fixture
def served(md: MetadataCloud) -> Iterator[tuple[str, str]]:
    """(base URL, server id): the metadata service on a real socket for one server."""
    cloudinit_or_skip()
    sid = md.boot(networks=[{"uuid": _network(md)}])
    for dotted, value in PROXY.items():
        group, _, name = dotted.rpartition(".")
        md.conf.set_override(name, value, group=group)
    services = md.cloud.services
    app = MetadataApp(guest_records(md.conf, services.api_db, services.cell_dbs),
                      MetadataSettings.from_conf(md.conf))  # fmt: skip
    proxied = NeutronProxy(app, md.proxy_headers(sid, "s3"))
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)  # connections wait in the backlog until uvicorn serves
    server = uvicorn.Server(uvicorn.Config(proxied, lifespan="on", log_config=None, log_level="warning"))  # fmt: skip
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name="md-uvicorn")
    thread.start()
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}", sid
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


def _network(md: MetadataCloud) -> str:
    """The embedded network service's flat network (the compute host allocates ports on it)."""
    opts = md.conf.openkeel_network
    network_service(md.cloud.services.api_db).bootstrap(
        "admin", {"id": opts.network_id, "name": opts.network_name, "cidr": opts.cidr,
                  "gateway": opts.gateway, "dns_nameservers": list(opts.dns_nameservers)}
    )  # fmt: skip
    return str(opts.network_id)


def _mac(md: MetadataCloud, sid: str) -> str:
    ports = md.cloud.api.get(f"/v2.1/servers/{sid}/os-interface").json()["interfaceAttachments"]
    return str(ports[0]["mac_addr"])


def test_cloud_init_reads_the_metadata_service(md: MetadataCloud, served: tuple[str, str]) -> None:
    from cloudinit.sources.helpers import ec2, openstack

    url, sid = served

    class Reader(openstack.MetadataReader):  # type: ignore[misc]
        """cloud-init's OpenStack reader (DataSourceOpenStack.read_metadata_service), its EC2
        part pointed at this service instead of the link-local address."""

        def _read_ec2_metadata(self) -> Any:
            return ec2.get_instance_metadata(metadata_address=url, timeout=5, retries=0)

    results = Reader(url, timeout=5, retries=0).read_v2()
    assert results["version"] == 2
    meta = results["metadata"]
    assert (meta["uuid"], meta["name"], meta["hostname"]) == (sid, "guest-1", "guest-1.novalocal")
    assert list(meta["public_keys"].values()) == [PUBLIC_KEY]
    assert results["userdata"] == USER_DATA
    assert results["vendordata"] == {} and results["vendordata2"] == {"static": {}}
    ec2_meta = results["ec2-metadata"]
    assert ec2_meta["hostname"] == "guest-1.novalocal"
    assert ec2_meta["placement"]["availability-zone"] == "nova"
    mac = _mac(md, sid)
    config = openstack.convert_net_json(results["networkdata"], known_macs={mac: "eth0"})
    (physical,) = [c for c in config["config"] if c["type"] == "physical"]
    assert physical["name"] == "eth0" and physical["mac_address"] == mac


@pytest.mark.parametrize("md", [ISO9660, VFAT], indirect=True)
def test_cloud_init_reads_the_config_drive(md: MetadataCloud, tmp_path: Path) -> None:
    cloudinit_or_skip()
    from cloudinit import distros, helpers, settings
    from cloudinit.sources import DataSourceConfigDrive
    from cloudinit.sources.helpers import openstack

    sid = md.boot(networks=[{"uuid": _network(md)}], config_drive=True)
    server = md.cloud.api.get(f"/v2.1/servers/{sid}", version="2.37").json()["server"]
    assert server["config_drive"] == "True"
    label, files = md.drive(sid)
    assert label == "config-2"
    assert "openstack/latest/meta_data.json" in files and "ec2/2009-04-04/meta-data.json" in files
    assert "ec2/2008-09-01/meta-data.json" not in files  # [api] config_drive_skip_versions
    seed = tmp_path / "cloud" / "seed" / "config_drive"
    for path, content in files.items():
        (seed / path).parent.mkdir(parents=True, exist_ok=True)
        (seed / path).write_bytes(content)
    paths = helpers.Paths({"cloud_dir": str(tmp_path / "cloud"), "run_dir": str(tmp_path / "run")})
    distro = distros.fetch("ubuntu")("ubuntu", {}, paths)
    source = DataSourceConfigDrive.DataSourceConfigDrive(settings.CFG_BUILTIN, distro, paths)
    assert source.get_data()
    assert source.get_instance_id() == sid
    assert source.get_public_ssh_keys() == [PUBLIC_KEY]
    assert source.userdata_raw == USER_DATA
    assert source.metadata["meta"] == {"role": "web"}
    assert source.ec2_metadata["instance-type"] == "m1.tiny"
    mac = _mac(md, sid)
    config = openstack.convert_net_json(source.network_json, known_macs={mac: "eth0"})
    assert [c["mac_address"] for c in config["config"] if c["type"] == "physical"] == [mac]
    # The same documents as the metadata service (but the random seed).
    service = md.metadata(**PROXY)
    headers = md.proxy_headers(sid, "s3")
    for name in ("meta_data.json", "network_data.json", "vendor_data2.json"):
        answered = service.get(f"/openstack/latest/{name}", headers=headers).json()
        on_drive = json.loads(files[f"openstack/latest/{name}"])
        answered.pop("random_seed", None)
        on_drive.pop("random_seed", None)
        assert answered == on_drive, name
    # Deleting the server removes its drive.
    assert md.cloud.api.delete(f"/v2.1/servers/{sid}").status_code == 204
    md.cloud.wait(sid, gone=True)
    assert not (md.instances_path / sid).exists()


def test_force_config_drive_gives_every_server_one(md: MetadataCloud) -> None:
    md.conf.set_override("force_config_drive", True)
    sid = md.boot()
    server = md.cloud.api.get(f"/v2.1/servers/{sid}", version="2.37").json()["server"]
    assert server["config_drive"] == "True"
    files = read_iso((md.instances_path / sid / "disk.config").read_bytes())
    assert json.loads(files["openstack/latest/meta_data.json"])["uuid"] == sid
    assert files["openstack/latest/user_data"] == USER_DATA


def test_no_drive_unless_asked(md: MetadataCloud) -> None:
    sid = md.boot()
    server = md.cloud.api.get(f"/v2.1/servers/{sid}", version="2.37").json()["server"]
    assert server["config_drive"] == ""
    assert not (md.instances_path / sid).exists()


def test_rebuild_regenerates_the_drive(md: MetadataCloud) -> None:
    from tests.functional.conftest import IMAGE

    sid = md.boot(config_drive=True)
    drive = md.instances_path / sid / "disk.config"
    first = json.loads(read_iso(drive.read_bytes())["openstack/latest/meta_data.json"])
    resp = md.cloud.api.post(f"/v2.1/servers/{sid}/action",
                             {"rebuild": {"imageRef": IMAGE, "name": "after"}})  # fmt: skip
    assert resp.status_code == 202, resp.text
    assert md.cloud.wait(sid)["status"] == "ACTIVE"
    second = json.loads(read_iso(drive.read_bytes())["openstack/latest/meta_data.json"])
    assert (first["name"], second["name"]) == ("guest-1", "after")
    assert first["random_seed"] != second["random_seed"]
