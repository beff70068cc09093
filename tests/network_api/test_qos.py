"""The QoS subset of the embedded network API (decision 0076): policies, minimum bandwidth and
packet rate rules, ``qos_policy_id`` on networks and ports, the ports' ``resource_request``
(extended form, admins only) and Neutron's refusals."""

from __future__ import annotations

import uuid
from typing import Any

from tests.network_api.conftest import PRIVATE, Neutron


def _policy(neutron: Neutron, **attrs: Any) -> dict[str, Any]:
    resp = neutron("POST", "/qos/policies", {"policy": attrs})
    assert resp.status_code == 201, resp.text
    return dict(resp.json()["policy"])


def test_the_extensions_are_listed(demo: Neutron) -> None:
    for alias in (
        "qos",
        "port-resource-request",
        "port-resource-request-groups",
        "qos-pps-minimum",
    ):
        assert demo("GET", f"/extensions/{alias}").status_code == 200, alias


def test_policy_rules_and_the_ports_resource_request(admin: Neutron, demo: Neutron) -> None:
    policy = _policy(admin, name="gold", shared=True)
    rules = f"/qos/policies/{policy['id']}/minimum_bandwidth_rules"
    made = admin("POST", rules, {"minimum_bandwidth_rule": {"min_kbps": 1000}})
    assert made.status_code == 201, made.text
    assert made.json()["minimum_bandwidth_rule"]["direction"] == "egress"
    ingress = {"minimum_bandwidth_rule": {"min_kbps": 2000, "direction": "ingress"}}
    assert admin("POST", rules, ingress).status_code == 201
    twice = admin("POST", rules, ingress)
    assert twice.status_code == 409 and twice.json()["NeutronError"]["type"] == "QoSRulesConflict"
    pps = f"/qos/policies/{policy['id']}/minimum_packet_rate_rules"
    rule = {"minimum_packet_rate_rule": {"min_kpps": 10, "direction": "any"}}
    assert admin("POST", pps, rule).status_code == 201
    shown = admin("GET", f"/qos/policies/{policy['id']}").json()["policy"]
    assert sorted(r["type"] for r in shown["rules"]) == [
        "minimum_bandwidth", "minimum_bandwidth", "minimum_packet_rate",
    ]  # fmt: skip

    port = demo.make("port", network_id=PRIVATE, qos_policy_id=policy["id"])
    assert port["qos_policy_id"] == policy["id"] and "resource_request" not in port
    request = admin("GET", f"/ports/{port['id']}").json()["port"]["resource_request"]
    bw, pr = request["request_groups"]
    assert bw["resources"] == {
        "NET_BW_EGR_KILOBIT_PER_SEC": 1000,
        "NET_BW_IGR_KILOBIT_PER_SEC": 2000,
    }
    assert bw["required"] == ["CUSTOM_PHYSNET_PUBLIC", "CUSTOM_VNIC_TYPE_NORMAL"]
    assert pr == {"id": pr["id"], "required": ["CUSTOM_VNIC_TYPE_NORMAL"],
                  "resources": {"NET_PACKET_RATE_KILOPACKET_PER_SEC": 10}}  # fmt: skip
    assert request["same_subtree"] == [bw["id"], pr["id"]]
    assert uuid.UUID(bw["id"]) and bw["id"] != pr["id"]

    in_use = admin("DELETE", f"/qos/policies/{policy['id']}")
    assert in_use.status_code == 409 and in_use.json()["NeutronError"]["type"] == "QosPolicyInUse"
    detached = demo("PUT", f"/ports/{port['id']}", {"port": {"qos_policy_id": None}})
    assert detached.json()["port"]["qos_policy_id"] is None
    assert admin("GET", f"/ports/{port['id']}").json()["port"]["resource_request"] is None
    assert admin("DELETE", f"/qos/policies/{policy['id']}").status_code == 204


def test_a_networks_policy_applies_to_its_ports(admin: Neutron) -> None:
    policy = _policy(admin, name="net")
    rules = f"/qos/policies/{policy['id']}/minimum_bandwidth_rules"
    assert admin("POST", rules, {"minimum_bandwidth_rule": {"min_kbps": 5}}).status_code == 201
    network = admin.make("network", name="qos-net", qos_policy_id=policy["id"])
    assert network["qos_policy_id"] == policy["id"]
    port = admin.make("port", network_id=network["id"])
    assert port["qos_policy_id"] is None and port["qos_network_policy_id"] == policy["id"]
    (group,) = port["resource_request"]["request_groups"]
    assert group["resources"] == {"NET_BW_EGR_KILOBIT_PER_SEC": 5}
    router = admin.make("port", network_id=network["id"], device_owner="network:router_interface")
    assert router["resource_request"] is None


def test_refusals(admin: Neutron, demo: Neutron) -> None:
    private = _policy(admin, name="admins-only")
    missing = demo(
        "POST", "/ports", {"port": {"network_id": PRIVATE, "qos_policy_id": private["id"]}}
    )
    assert missing.status_code == 404
    own = _policy(demo, name="mine")
    rules = f"/qos/policies/{own['id']}/minimum_bandwidth_rules"
    bad = demo("POST", rules, {"minimum_bandwidth_rule": {"min_kbps": 1, "direction": "up"}})
    assert bad.status_code == 400
    assert demo("POST", rules, {"minimum_bandwidth_rule": {}}).status_code == 400
    assert (
        demo("POST", "/qos/policies", {"policy": {"name": "s", "shared": True}}).status_code == 403
    )
    gone = f"{rules}/{uuid.uuid4()}"
    assert demo("GET", gone).status_code == 404
