"""Security groups and rules, floating IPs, quotas and extensions as Neutron answers them."""

from __future__ import annotations

import pytest

from tests.network_api.conftest import PRIVATE, Neutron, error


def test_default_group_rules_and_protection(demo: Neutron) -> None:
    [group] = demo("GET", "/security-groups").json()["security_groups"]
    rules = {
        (r["direction"], r["ethertype"], r["remote_group_id"])
        for r in group["security_group_rules"]
    }
    assert rules == {
        ("egress", "IPv4", None),
        ("egress", "IPv6", None),
        ("ingress", "IPv4", group["id"]),
        ("ingress", "IPv6", group["id"]),
    }
    assert all(r["belongs_to_default_sg"] for r in group["security_group_rules"])
    kind, _ = error(demo("DELETE", f"/security-groups/{group['id']}"), 409)
    assert kind == "SecurityGroupCannotRemoveDefault"
    assert error(demo("POST", "/security-groups", {"security_group": {"name": "default"}}), 409)


def test_group_and_rule_lifecycle(demo: Neutron, other: Neutron) -> None:
    web = demo.make("security_group", name="web", description="http")
    assert {r["direction"] for r in web["security_group_rules"]} == {"egress"}
    rule = demo.make("security_group_rule", security_group_id=web["id"], direction="ingress",
                     protocol="tcp", port_range_min=80, port_range_max=80,
                     remote_ip_prefix="0.0.0.0/0")  # fmt: skip
    assert rule["protocol"] == "tcp" and rule["ethertype"] == "IPv4"
    kind, message = error(demo("POST", "/security-group-rules", {"security_group_rule": {
        "security_group_id": web["id"], "direction": "ingress", "protocol": "tcp",
        "port_range_min": 80, "port_range_max": 80, "remote_ip_prefix": "0.0.0.0/0"}}), 409)  # fmt: skip
    assert kind == "SecurityGroupRuleExists" and rule["id"] in message
    assert other("GET", f"/security-groups/{web['id']}").status_code == 404
    port = demo.make("port", network_id=PRIVATE, security_groups=[web["id"]])
    assert error(demo("DELETE", f"/security-groups/{web['id']}"), 409)[0] == "SecurityGroupInUse"
    demo("DELETE", f"/ports/{port['id']}")
    assert demo("DELETE", f"/security-group-rules/{rule['id']}").status_code == 204
    assert demo("DELETE", f"/security-groups/{web['id']}").status_code == 204


@pytest.mark.parametrize(
    ("rule", "kind"),
    [
        ({"direction": "sideways"}, "InvalidInput"),
        ({"direction": "ingress", "protocol": "bogus"}, "SecurityGroupRuleInvalidProtocol"),
        (
            {"direction": "ingress", "protocol": "tcp", "port_range_min": 90, "port_range_max": 80},
            "SecurityGroupInvalidPortRange",
        ),
        (
            {"direction": "ingress", "protocol": "icmp", "port_range_min": 300},
            "SecurityGroupInvalidIcmpValue",
        ),
        ({"direction": "ingress", "port_range_min": 22}, "SecurityGroupInvalidPortValue"),
        (
            {"direction": "ingress", "remote_ip_prefix": "::/0"},
            "SecurityGroupRuleParameterConflict",
        ),
        ({"direction": "ingress", "ethertype": "IPv5"}, "SecurityGroupRuleInvalidEtherType"),
    ],
)
def test_bad_rules(demo: Neutron, rule: dict[str, object], kind: str) -> None:
    group = demo.make("security_group", name="g")
    resp = demo(
        "POST",
        "/security-group-rules",
        {"security_group_rule": {"security_group_id": group["id"], **rule}},
    )
    assert error(resp, 400)[0] == kind


def test_floating_ips(demo: Neutron) -> None:
    public = next(n for n in demo("GET", "/networks?router:external=true").json()["networks"])
    private_net = demo("POST", "/floatingips", {"floatingip": {"floating_network_id": PRIVATE}})
    assert "not a valid external network" in error(private_net, 400)[1]
    fip = demo.make("floatingip", floating_network_id=public["id"])
    assert fip["floating_ip_address"].startswith("172.24.4.") and fip["port_id"] is None
    port = demo.make("port", network_id=PRIVATE)
    bound = demo(
        "PUT", f"/floatingips/{fip['id']}", {"floatingip": {"port_id": port["id"]}}
    ).json()["floatingip"]
    assert (
        bound["fixed_ip_address"] == port["fixed_ips"][0]["ip_address"]
        and bound["status"] == "ACTIVE"
    )
    demo("DELETE", f"/ports/{port['id']}")
    assert demo("GET", f"/floatingips/{fip['id']}").json()["floatingip"]["port_id"] is None
    assert demo("DELETE", f"/floatingips/{fip['id']}").status_code == 204


def test_quota_is_enforced(demo: Neutron) -> None:
    for index in range(9):  # default group + 9 = 10
        demo.make("security_group", name=f"g{index}")
    kind, message = error(
        demo("POST", "/security-groups", {"security_group": {"name": "one-more"}}), 409
    )
    assert kind == "OverQuota" and "security_group" in message
    quota = demo("GET", "/quotas/demo").json()["quota"]
    assert quota["security_group"] == 10 and quota["port"] == 500
    assert demo("GET", "/quotas/other").status_code == 403


def test_extensions_and_discovery(demo: Neutron, client: object) -> None:
    aliases = {e["alias"] for e in demo("GET", "/extensions").json()["extensions"]}
    assert {"security-group", "external-net", "binding", "quotas", "port-security"} <= aliases
    assert demo("GET", "/extensions/bgp").status_code == 404
    versions = demo.client.request("GET", "/networking/", token=None).json()
    assert versions["versions"][0]["id"] == "v2.0"
