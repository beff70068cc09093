"""Networks, subnets and ports: Neutron's answers, visibility, address allocation."""

from __future__ import annotations

import threading

import pytest

from tests.network_api.conftest import PRIVATE, Neutron, error


def test_the_all_in_one_networks_are_there(demo: Neutron, admin: Neutron) -> None:
    nets = {n["name"]: n for n in demo("GET", "/networks").json()["networks"]}
    assert set(nets) == {"private", "public"}
    assert nets["private"]["id"] == PRIVATE and nets["private"]["shared"] is True
    assert nets["public"]["router:external"] is True
    assert "provider:network_type" not in nets["private"]
    assert admin("GET", f"/networks/{PRIVATE}").json()["network"]["provider:network_type"] == "flat"
    subnet = demo("GET", f"/subnets?network_id={PRIVATE}").json()["subnets"][0]
    assert subnet["cidr"] == "10.0.0.0/24" and subnet["gateway_ip"] == "10.0.0.1"
    assert subnet["allocation_pools"] == [{"start": "10.0.0.2", "end": "10.0.0.254"}]


def test_project_network_lifecycle_and_visibility(demo: Neutron, other: Neutron) -> None:
    net = demo.make("network", name="mine")
    assert net["project_id"] == "demo" and net["status"] == "ACTIVE" and net["subnets"] == []
    sub = demo.make("subnet", network_id=net["id"], cidr="192.168.7.0/24", ip_version=4)
    assert sub["gateway_ip"] == "192.168.7.1"
    assert demo("GET", f"/networks/{net['id']}").json()["network"]["subnets"] == [sub["id"]]
    # Another project sees neither.
    kind, message = error(other("GET", f"/networks/{net['id']}"), 404)
    assert (kind, message) == ("NetworkNotFound", f"Network {net['id']} could not be found.")
    assert net["id"] not in {n["id"] for n in other("GET", "/networks").json()["networks"]}
    assert (
        error(other("POST", "/ports", {"port": {"network_id": net["id"]}}), 404)[0]
        == "NetworkNotFound"
    )
    # Overlap, bad CIDR, version mismatch.
    assert (
        error(
            demo(
                "POST",
                "/subnets",
                {"subnet": {"network_id": net["id"], "cidr": "192.168.7.128/25", "ip_version": 4}},
            ),
            400,
        )[0]
        == "InvalidInput"
    )
    assert (
        error(
            demo(
                "POST",
                "/subnets",
                {"subnet": {"network_id": net["id"], "cidr": "nope", "ip_version": 4}},
            ),
            400,
        )[0]
        == "InvalidInput"
    )
    assert error(
        demo(
            "POST",
            "/subnets",
            {"subnet": {"network_id": net["id"], "cidr": "fd00::/64", "ip_version": 4}},
        ),
        400,
    )
    port = demo.make("port", network_id=net["id"], name="p")
    assert error(demo("DELETE", f"/networks/{net['id']}"), 409)[0] == "NetworkInUse"
    assert error(demo("DELETE", f"/subnets/{sub['id']}"), 409)[0] == "SubnetInUse"
    assert demo("DELETE", f"/ports/{port['id']}").status_code == 204
    assert demo("DELETE", f"/networks/{net['id']}").status_code == 204
    assert demo("GET", f"/subnets/{sub['id']}").status_code == 404


def test_only_admins_make_shared_or_external_networks(demo: Neutron, admin: Neutron) -> None:
    kind, message = error(demo("POST", "/networks", {"network": {"shared": True}}), 403)
    assert kind == "PolicyNotAuthorized" and "create_network:shared" in message
    assert error(demo("POST", "/networks", {"network": {"router:external": True}}), 403)
    assert admin.make("network", name="ext", **{"router:external": True})["router:external"]


def test_ports_get_addresses_macs_and_the_default_group(demo: Neutron, other: Neutron) -> None:
    port = demo.make("port", network_id=PRIVATE, device_id="vm-1", device_owner="compute:nova")
    [fixed] = port["fixed_ips"]
    assert fixed["ip_address"] == "10.0.0.2" and port["mac_address"].startswith("fa:16:3e:")
    groups = demo("GET", "/security-groups").json()["security_groups"]
    assert [g["name"] for g in groups] == ["default"] and port["security_groups"] == [
        groups[0]["id"]
    ]
    assert "binding:host_id" not in port
    chosen = demo.make("port", network_id=PRIVATE, fixed_ips=[{"ip_address": "10.0.0.50"}])
    assert chosen["fixed_ips"][0]["ip_address"] == "10.0.0.50"
    taken = other(
        "POST",
        "/ports",
        {"port": {"network_id": PRIVATE, "fixed_ips": [{"ip_address": "10.0.0.50"}]}},
    )
    assert error(taken, 409)[0] == "IpAddressInUse"
    outside = demo(
        "POST",
        "/ports",
        {"port": {"network_id": PRIVATE, "fixed_ips": [{"ip_address": "10.9.9.9"}]}},
    )
    assert error(outside, 400)[0] == "InvalidIpForSubnet"
    found = demo("GET", "/ports?fixed_ips=ip_address=10.0.0.50").json()["ports"]
    assert [p["id"] for p in found] == [chosen["id"]]
    assert [p["id"] for p in demo("GET", "/ports?device_id=vm-1").json()["ports"]] == [port["id"]]
    assert other("GET", f"/ports/{port['id']}").status_code == 404
    changed = demo(
        "PUT", f"/ports/{port['id']}", {"port": {"fixed_ips": [{"ip_address": "10.0.0.60"}]}}
    )
    assert changed.json()["port"]["fixed_ips"][0]["ip_address"] == "10.0.0.60"
    again = demo.make("port", network_id=PRIVATE, fixed_ips=[{"ip_address": "10.0.0.2"}])
    assert again["fixed_ips"][0]["ip_address"] == "10.0.0.2"  # freed by the update


def test_bad_attributes_are_refused(demo: Neutron) -> None:
    assert (
        error(demo("POST", "/networks", {"network": {"bogus": 1}}), 400)[1]
        == "Unrecognized attribute(s) 'bogus'"
    )
    assert (
        "is not a valid boolean value"
        in error(demo("POST", "/networks", {"network": {"admin_state_up": "maybe"}}), 400)[1]
    )
    assert "Required attribute 'network_id'" in error(demo("POST", "/ports", {"port": {}}), 400)[1]
    assert "Unable to find 'port'" in error(demo("POST", "/ports", {"nope": {}}), 400)[1]
    assert error(demo("POST", "/ports", {"port": {"network_id": "not-a-uuid"}}), 400)


def test_concurrent_ports_never_share_an_address(demo: Neutron) -> None:
    made: list[str] = []
    lock = threading.Lock()

    def one() -> None:
        port = demo.make("port", network_id=PRIVATE)
        with lock:
            made.append(port["fixed_ips"][0]["ip_address"])

    threads = [threading.Thread(target=one) for _ in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(made) == 12 and len(set(made)) == 12


@pytest.mark.parametrize("query", ["fields=id&fields=name", "limit=1"])
def test_fields_and_paging(demo: Neutron, query: str) -> None:
    body = demo("GET", f"/networks?{query}").json()
    if query.startswith("fields"):
        assert all(set(n) == {"id", "name"} for n in body["networks"])
    else:
        assert len(body["networks"]) == 1 and body["networks_links"][0]["rel"] == "next"
        marker = body["networks_links"][0]["href"].split("marker=")[1]
        rest = demo("GET", f"/networks?limit=1&marker={marker}").json()["networks"]
        assert rest and rest[0]["id"] != body["networks"][0]["id"]
