"""The pure metadata builders (openkeel.domain.guest_metadata), the config drive image and
the metadata service's cache and request identification."""

from __future__ import annotations

import base64
import json

import pytest

from openkeel.domain.guest_metadata import network, password
from openkeel.domain.guest_metadata.record import GuestKey, GuestRecord, key_type_of
from openkeel.domain.guest_metadata.tree import MetadataTree, NoSuchPath, VendorData
from openkeel.metadata.cache import ExpiringCache
from openkeel.metadata.identify import MetadataHttpError, ProxySettings, identify, signature
from openkeel.runtime.clock import FakeClock
from openkeel.virt.config_drive import iso_image, read_iso, volume_label

RECORD = GuestRecord(
    uuid="u-1", project_id="p-1", name="vm", hostname="vm.novalocal", ec2_id=26,
    image_ref="9e1b7a48-7c39-4a3f-9b1a-5d2a3c4b5e6f", flavor_name="m1.small",
    key=GuestKey("mine", "ssh", "ssh-rsa AAA"), user_data=base64.b64encode(b"hi").decode(),
    security_groups=("default",), availability_zone="az1",
)  # fmt: skip


def _tree(**vendor: object) -> MetadataTree:
    return MetadataTree(RECORD, VendorData(**vendor), random_bytes=bytes)  # type: ignore[arg-type]


def test_openstack_documents_grow_with_the_version() -> None:
    tree = _tree()
    assert tree.entries("2012-08-10") == ["meta_data.json", "user_data"]
    assert tree.entries("2016-06-30")[-1] == "network_data.json"
    folsom = tree.meta_data("2012-08-10")
    assert set(folsom) == {"uuid", "public_keys", "keys", "hostname", "name", "launch_index",
                           "availability_zone"}  # fmt: skip
    latest = tree.meta_data("latest")
    assert latest["random_seed"] == base64.b64encode(bytes(512)).decode()
    assert (latest["project_id"], latest["devices"], latest["dedicated_cpus"]) == ("p-1", [], [])
    with pytest.raises(NoSuchPath):
        tree.lookup("/openstack/2012-08-10/network_data.json")


def test_future_versions_are_hidden_from_the_listing_only() -> None:
    tree = _tree()
    listed = tree.lookup("/openstack", today="2020-01-01").body.decode().split("\n")
    assert listed[-2:] == ["2018-08-27", "latest"]
    assert tree.lookup("/openstack/2025-04-04/meta_data.json").content_type == "application/json"


def test_ec2_tree_and_listing() -> None:
    tree = _tree()
    assert tree.lookup("/latest/meta-data/public-keys").body == b"0=mine"
    assert tree.lookup("/latest/meta-data/public-keys/0").body == b"openssh-key"
    assert tree.lookup("/latest/meta-data/instance-id").body == b"i-0000001a"
    assert tree.lookup("/latest/meta-data/ami-id").body == b"ami-9e1b7a48"
    assert tree.lookup("/latest/meta-data/security-groups").body == b"default"
    assert tree.lookup("/latest/meta-data/block-device-mapping/root").body == b"/dev/vda"
    assert tree.lookup("/2009-04-04/user-data").body == b"hi"
    assert b"instance-type" not in tree.lookup("/2007-03-01/meta-data/").body
    with pytest.raises(NoSuchPath):
        tree.lookup("/latest/meta-data/nothing")


def test_vendor_data2_orders_static_then_dynamic_without_overwriting() -> None:
    tree = _tree(static={"a": 1}, dynamic=lambda: {"static": "x", "t": {"b": 2}},
                 providers=("StaticJSON", "DynamicJSON"))  # fmt: skip
    assert tree.vendor_data2() == {"static": {"a": 1}, "t": {"b": 2}}


def test_config_drive_files() -> None:
    files = dict(_tree().config_drive_files(("1.0", "2007-01-19")))
    assert "ec2/1.0/meta-data.json" not in files and files["ec2/latest/user-data"] == b"hi"
    ec2 = json.loads(files["ec2/2009-04-04/meta-data.json"])
    assert ec2["public-keys"] == {"0": {"openssh-key": "ssh-rsa AAA"}}  # no "_name" on a drive
    assert "openstack/latest/password" not in files
    assert json.loads(files["openstack/2015-10-15/network_data.json"]) == {}
    image = iso_image(files.items())
    assert volume_label(image) == "config-2"
    assert read_iso(image) == files


def test_dhcp_subnet_gives_a_dhcp_network_and_no_link_mtu() -> None:
    vif = {"id": "v", "address": "fa:16:3e:00:00:09", "type": "weird",
           "network": {"id": "n", "meta": {"mtu": 1400}, "subnets": [
               {"cidr": "10.1.0.0/24", "meta": {"dhcp_server": "10.1.0.2"},
                "ips": [{"address": "10.1.0.9"}]},
               {"cidr": "fd00::/64", "meta": {"ipv6_address_mode": "slaac"},
                "ips": [{"address": "fd00::9"}]}]}}  # fmt: skip
    doc = network.network_data([vif])
    assert doc is not None
    assert doc["links"] == [{"id": "interface0", "vif_id": "v", "type": "phy", "mtu": None,
                             "ethernet_mac_address": "fa:16:3e:00:00:09"}]  # fmt: skip
    assert [n["type"] for n in doc["networks"]] == ["ipv4_dhcp", "ipv6_slaac"]
    assert doc["networks"][1]["netmask"] == "ffff:ffff:ffff:ffff::"
    assert network.network_data([]) is None


def test_password_chunks_and_key_types() -> None:
    stored = password.chunked("x" * 600)
    assert [len(stored[k]) for k in password.KEYS] == [255, 255, 90, 0]
    assert password.joined(stored) == "x" * 600
    assert key_type_of("-----BEGIN CERTIFICATE-----\nMII") == "x509"
    assert key_type_of("ssh-ed25519 AAAA") == "ssh"


def test_cache_expires_with_the_clock() -> None:
    clock = FakeClock()
    cache: ExpiringCache[str] = ExpiringCache(15, clock)
    cache.keep("k", "v")
    clock.advance(14.9)
    assert cache.get("k") == "v"
    clock.advance(0.2)
    assert cache.get("k") is None
    off: ExpiringCache[str] = ExpiringCache(0, clock)
    off.keep("k", "v")
    assert off.get("k") is None


def test_identify() -> None:
    proxy = ProxySettings(service_metadata_proxy=True, shared_secret="s")
    good = [("x-instance-id", "i"), ("x-tenant-id", "t"),
            ("x-instance-id-signature", signature("s", "i"))]  # fmt: skip
    assert identify(proxy, good, "10.0.0.1").instance_id == "i"
    twice = [*good, ("x-tenant-id", "t2")]
    with pytest.raises(MetadataHttpError, match="Multiple X-Tenant-ID"):
        identify(proxy, twice, None)
    with pytest.raises(MetadataHttpError) as raised:
        identify(proxy, [*good[:2], ("x-instance-id-signature", signature("t", "i"))], None)
    assert raised.value.status == 403
    assert b"403 Forbidden\n\nInvalid proxy request signature." in raised.value.body()
    assert identify(ProxySettings(), good, "10.0.0.1").address == "10.0.0.1"


def test_config_drive_required_as_nova_decides() -> None:
    from openkeel.compute.config_drive import required
    from openkeel.conf import make_config
    from openkeel.domain.instances import FlavorSnapshot, Instance

    flavor = FlavorSnapshot(flavorid="1", name="m1.tiny", memory_mb=512, vcpus=1, root_gb=1)
    plain = Instance(uuid="u", project_id="p", user_id="x", flavor=flavor)
    conf = make_config()
    assert not required(conf, plain)
    assert required(conf, Instance(uuid="u", project_id="p", user_id="x", flavor=flavor, config_drive="True"))  # fmt: skip
    mandatory = Instance(uuid="u", project_id="p", user_id="x", flavor=flavor,
                         system_metadata={"image_img_config_drive": "mandatory"})  # fmt: skip
    assert required(conf, mandatory)
    assert required(make_config(overrides={"force_config_drive": True}), plain)


def test_tagged_ports_are_devices() -> None:
    tagged = {"id": "a", "address": "fa:16:3e:00:00:0a", "tag": "mgmt", "details": {"vlan": "42"}}
    plain = {"id": "b", "address": "fa:16:3e:00:00:0b"}
    trusted = {"id": "c", "address": "fa:16:3e:00:00:0c", "profile": {"trusted": "true"}}
    tree = MetadataTree(GuestRecord(uuid="u", project_id="p", name="n", hostname="h",
                                    network_info=(tagged, plain, trusted)), random_bytes=bytes)  # fmt: skip
    assert tree.meta_data("2016-06-30")["devices"] == [
        {"type": "nic", "mac": "fa:16:3e:00:00:0a", "bus": "none", "address": "none", "tags": ["mgmt"]},
        {"type": "nic", "mac": "fa:16:3e:00:00:0c", "bus": "none", "address": "none"},
    ]  # fmt: skip
    latest = tree.meta_data("latest")["devices"]
    assert (latest[0]["vlan"], latest[0]["vf_trusted"], latest[1]["vf_trusted"]) == (
        42,
        False,
        True,
    )
    assert tree.meta_data("2012-08-10").get("devices") is None
