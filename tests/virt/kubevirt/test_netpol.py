"""Security group rules as NetworkPolicy entries (decision 0077): the pure mapping."""

from __future__ import annotations

import json
from typing import Any

import pytest

from openkeel.virt.kubevirt.manifests import naming, netpol

SERVER = "0b5b4c3e-6c1e-4a53-9d33-5f0e7c1c2a11"
PEER = "7d1f0f57-2b3e-4f8e-9a55-0d2b8a3c9e22"


def rule(**fields: Any) -> dict[str, Any]:
    base = {"id": "r", "direction": "ingress", "ethertype": "IPv4", "protocol": None,
            "port_range_min": None, "port_range_max": None, "remote_ip_prefix": None,
            "remote_group_id": None}  # fmt: skip
    return {**base, **fields}


@pytest.mark.parametrize(
    ("fields", "entry"),
    [
        # a port range of TCP from a prefix (host bits cleared, as Neutron stores it)
        ({"protocol": "tcp", "port_range_min": 8000, "port_range_max": 8080, "remote_ip_prefix": "10.1.2.3/16"},
         {"from": [{"ipBlock": {"cidr": "10.1.0.0/16"}}], "ports": [{"protocol": "TCP", "port": 8000, "endPort": 8080}]}),
        # one UDP port, by IANA number
        ({"protocol": "17", "port_range_min": 53, "port_range_max": 53, "remote_ip_prefix": "192.0.2.0/24"},
         {"from": [{"ipBlock": {"cidr": "192.0.2.0/24"}}], "ports": [{"protocol": "UDP", "port": 53}]}),
        # SCTP without ports: the protocol alone
        ({"protocol": "sctp", "remote_ip_prefix": "2001:db8::/32", "ethertype": "IPv6"},
         {"from": [{"ipBlock": {"cidr": "2001:db8::/32"}}], "ports": [{"protocol": "SCTP"}]}),
        # any protocol, no remote: every address of the ethertype and every pod
        ({}, {"from": [{"ipBlock": {"cidr": "0.0.0.0/0"}}, {"namespaceSelector": {}}]}),
        ({"ethertype": "IPv6", "direction": "egress"},
         {"to": [{"ipBlock": {"cidr": "::/0"}}, {"namespaceSelector": {}}]}),
        # a remote group: its member servers' pods
        ({"protocol": "tcp", "port_range_min": 22, "port_range_max": 22, "remote_group_id": "g-web"},
         {"from": [{"podSelector": {"matchExpressions": [
             {"key": naming.LABEL_SERVER_ID, "operator": "In", "values": sorted([SERVER, PEER])}]}}],
          "ports": [{"protocol": "TCP", "port": 22}]}),
    ],
)  # fmt: skip
def test_mappable_rules(fields: dict[str, Any], entry: dict[str, Any]) -> None:
    assert netpol.map_rule(rule(**fields), {"g-web": (PEER, SERVER)}) == entry


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ({"protocol": "icmp", "remote_ip_prefix": "0.0.0.0/0"}, "protocol icmp is not TCP, UDP or SCTP"),
        ({"protocol": "ipv6-icmp", "ethertype": "IPv6"}, "protocol ipv6-icmp is not TCP, UDP or SCTP"),
        ({"protocol": "47"}, "protocol 47 is not TCP, UDP or SCTP"),
        ({"remote_group_id": "g-empty"}, "remote group g-empty has no server"),
        ({"remote_address_group_id": "ag-1"}, "remote address groups are not mappable"),
    ],
)  # fmt: skip
def test_unmappable_rules_are_left_out_with_the_reason(fields: dict[str, Any], reason: str) -> None:
    assert netpol.map_rule(rule(**fields), {}) == netpol.Unmapped("r", reason)


def test_a_group_is_one_policy_selecting_the_servers_pod_both_directions() -> None:
    """Neutron's default group (egress anywhere, ingress from members of the group) plus an
    ICMP rule that cannot be said: the ICMP rule is listed in the annotation, not allowed."""
    group = {"id": "g-default", "name": "default", "security_group_rules": [
        rule(id="e4", direction="egress"), rule(id="e6", direction="egress", ethertype="IPv6"),
        rule(id="i4", remote_group_id="g-default"),
        rule(id="icmp", protocol="icmp", remote_ip_prefix="0.0.0.0/0"),
    ]}  # fmt: skip
    policy = netpol.network_policy(SERVER, "ns-1", group, {"g-default": (SERVER, PEER)})
    meta, spec = policy["metadata"], policy["spec"]
    assert (policy["apiVersion"], policy["kind"]) == ("networking.k8s.io/v1", "NetworkPolicy")
    assert meta["name"] == netpol.policy_name(SERVER, "g-default") == f"sg-{SERVER}-g-default"
    assert meta["namespace"] == "ns-1"
    assert meta["labels"] == {naming.LABEL_MANAGED_BY: naming.MANAGED_BY, naming.LABEL_SERVER_ID: SERVER,
                              netpol.LABEL_SECURITY_GROUP_ID: "g-default"}  # fmt: skip
    assert json.loads(meta["annotations"][netpol.ANNOTATION_UNMAPPED]) == [
        "icmp: protocol icmp is not TCP, UDP or SCTP"
    ]
    assert spec["podSelector"] == {"matchLabels": {naming.LABEL_SERVER_ID: SERVER}}
    assert spec["policyTypes"] == ["Ingress", "Egress"]
    assert len(spec["egress"]) == 2 and len(spec["ingress"]) == 1


def test_a_group_without_rules_of_a_direction_denies_that_direction() -> None:
    """No ingress rule: the Ingress policy type with no entry (nothing comes in); an empty
    group denies both ways, as a Neutron port whose only group has no rules."""
    policy = netpol.network_policy(SERVER, "ns", {"id": "g", "security_group_rules": [rule(direction="egress")]}, {})  # fmt: skip
    assert "ingress" not in policy["spec"] and len(policy["spec"]["egress"]) == 1
    empty = netpol.network_policy(SERVER, "ns", {"id": "g"}, {})["spec"]
    assert (
        empty["policyTypes"] == ["Ingress", "Egress"]
        and "ingress" not in empty
        and "egress" not in empty
    )
    assert "annotations" not in netpol.network_policy(SERVER, "ns", {"id": "g"}, {})["metadata"]
