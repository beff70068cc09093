"""``[kubevirt] network_mappings``: where each port goes, and what the guest is told to do
with its address (pure manifest builders; the cluster side is test_networking_k8s)."""

from __future__ import annotations

import pytest

from openkeel.virt.kubevirt.manifests import networks
from openkeel.virt.kubevirt.manifests.inputs import Subnet
from openkeel.virt.kubevirt.manifests.settings import KubevirtSettings
from openkeel.virt.model import NetworkInterface

SETTINGS = KubevirtSettings(
    network_namespace="nets",
    network_mappings={"podnet": "pod", "id-lan": "infra/lan", "storage": "dhcp:infra/store"},
)
POD = NetworkInterface("p1", "id-pod", "fa:16:3e:00:00:01", ("10.244.255.3",), network_name="podnet")  # fmt: skip
LAN = NetworkInterface("p2", "id-lan", "fa:16:3e:00:00:02", ("192.168.7.5",), network_name="lan")
STORE = NetworkInterface("p3", "id-st", "fa:16:3e:00:00:03", ("172.31.0.9",), network_name="storage")  # fmt: skip
OTHER = NetworkInterface("p4", "id-other", "fa:16:3e:00:00:04", ("10.0.0.4",), network_name="x")
SUBNETS = {
    "id-pod": (Subnet("10.244.0.0/16", "10.244.0.1", dhcp=False),),
    "id-lan": (Subnet("192.168.7.0/24", "192.168.7.1", dhcp=False),),
    "id-st": (Subnet("172.31.0.0/24", None, dhcp=False),),
}


def test_targets_by_id_then_name_and_the_default_nad() -> None:
    target = networks.target_of
    assert target(POD, SETTINGS, "ns").pod and target(POD, SETTINGS, "ns").cluster_addressed
    assert target(LAN, SETTINGS, "ns") == networks.NetTarget("infra/lan", False)
    assert target(STORE, SETTINGS, "ns") == networks.NetTarget("infra/store", True)
    assert target(OTHER, SETTINGS, "ns") == networks.NetTarget("nets/net-id-other", False)


@pytest.mark.parametrize("value", ["lan", "dhcp:", "a/b/c", "/lan", "dhcp:ns/"])
def test_a_malformed_mapping_is_a_clear_error(value: str) -> None:
    settings = KubevirtSettings(network_mappings={"x": value})
    with pytest.raises(networks.NetworkMappingError, match="network_mappings"):
        networks.target_of(OTHER, settings, "ns")


def test_nics_bindings_and_the_cluster_addressed_ports() -> None:
    nics = networks.build_nics((POD, LAN, STORE), None, SETTINGS, "ns")
    assert [next(iter(set(i) & {"masquerade", "bridge"})) for i in nics.interfaces] == ["masquerade", "bridge", "bridge"]  # fmt: skip
    assert [i["macAddress"] for i in nics.interfaces] == [p.mac_address for p in (POD, LAN, STORE)]
    assert nics.networks[0] == {"name": nics.interfaces[0]["name"], "pod": {}}
    assert nics.cluster_addressed == {"p1", "p3"}


def test_direct_ports_and_a_second_pod_port_are_refused() -> None:
    direct = NetworkInterface("p9", "id-pod", "fa:16:3e:00:00:09", network_name="podnet", vnic_type="direct")  # fmt: skip
    with pytest.raises(networks.NetworkMappingError, match="SR-IOV"):
        networks.build_nics((direct,), None, SETTINGS, "ns")
    second = NetworkInterface("p8", "id-pod", "fa:16:3e:00:00:08", network_name="podnet")
    with pytest.raises(networks.NetworkMappingError, match="at most one"):
        networks.build_nics((POD, second), None, SETTINGS, "ns")


def test_the_guest_asks_dhcp_on_cluster_addressed_ports_only() -> None:
    cluster = frozenset({"p1", "p3"})
    document = networks.network_data((POD, LAN, STORE), SUBNETS, cluster)
    assert [n["type"] for n in document["networks"]] == ["ipv4_dhcp", "ipv4", "ipv4_dhcp"]
    assert document["networks"][1]["ip_address"] == "192.168.7.5"
    plan = networks.netplan_v2((POD, LAN, STORE), SUBNETS, cluster)["ethernets"]
    assert (plan["nic0"]["dhcp4"], "addresses" in plan["nic0"]) == (True, False)
    assert plan["nic1"]["addresses"] == ["192.168.7.5/24"]
    # A cluster-addressed port without an address yet still gets its DHCP link.
    bare = NetworkInterface("p1", "id-new", "fa:16:3e:00:00:01", (), network_name="podnet")
    assert [n["type"] for n in networks.network_data((bare,), {}, frozenset({"p1"}))["networks"]] == ["ipv4_dhcp"]  # fmt: skip
