"""Routers of the embedded network API: CRUD, interfaces, gateway, Neutron's errors, and the
floating-IP reachability rule."""

from __future__ import annotations

from tests.network_api.conftest import PRIVATE, Neutron


def _net(demo: Neutron, cidr: str = "10.9.0.0/24") -> tuple[str, str]:
    net = demo.make("network", name="n")
    sub = demo.make("subnet", network_id=net["id"], cidr=cidr, ip_version=4)
    return net["id"], sub["id"]


def _public(admin: Neutron) -> str:
    nets = admin("GET", "/networks?name=public").json()["networks"]
    return str(nets[0]["id"])


def test_router_crud_interfaces_and_errors(admin: Neutron, demo: Neutron) -> None:
    net, sub = _net(demo)
    router = demo.make("router", name="r")
    assert router["status"] == "ACTIVE" and router["external_gateway_info"] is None
    rid = router["id"]
    put = demo("PUT", f"/routers/{rid}/add_router_interface", {"subnet_id": sub})
    assert put.status_code == 200, put.text
    info = put.json()
    assert info["subnet_id"] == sub and info["id"] == rid
    port = demo("GET", f"/ports/{info['port_id']}").json()["port"]
    assert port["device_owner"] == "network:router_interface"
    assert port["fixed_ips"][0]["ip_address"] == "10.9.0.1"
    again = demo("PUT", f"/routers/{rid}/add_router_interface", {"subnet_id": sub})
    assert again.status_code == 400
    assert again.json()["NeutronError"]["message"] == (
        f"Bad router request: Router already has a port on subnet {sub}."
    )
    neither = demo("PUT", f"/routers/{rid}/add_router_interface", {})
    assert neither.status_code == 400
    gone = demo("DELETE", f"/routers/{rid}")
    assert gone.status_code == 409 and gone.json()["NeutronError"]["type"] == "RouterInUse"
    assert demo("DELETE", f"/subnets/{sub}").status_code == 409
    assert demo("DELETE", f"/networks/{net}").status_code == 409
    public = _public(admin)
    set_gw = demo(
        "PUT", f"/routers/{rid}", {"router": {"external_gateway_info": {"network_id": public}}}
    )
    assert set_gw.status_code == 200, set_gw.text
    gw = set_gw.json()["router"]["external_gateway_info"]
    assert gw["network_id"] == public and gw["enable_snat"] is True
    assert gw["external_fixed_ips"][0]["ip_address"].startswith("172.24.4.")
    bad_gw = demo(
        "PUT", f"/routers/{rid}", {"router": {"external_gateway_info": {"network_id": net}}}
    )
    assert bad_gw.status_code == 400
    rm = demo("PUT", f"/routers/{rid}/remove_router_interface", {"subnet_id": sub})
    assert rm.status_code == 200, rm.text
    rm2 = demo("PUT", f"/routers/{rid}/remove_router_interface", {"subnet_id": sub})
    assert rm2.status_code == 404
    assert rm2.json()["NeutronError"]["type"] == "RouterInterfaceNotFoundForSubnet"
    assert demo("DELETE", f"/routers/{rid}").status_code == 204
    missing = demo("GET", f"/routers/{rid}")
    assert missing.status_code == 404
    assert missing.json()["NeutronError"]["message"] == f"Router {rid} could not be found"
    assert demo("DELETE", f"/networks/{net}").status_code == 204


def test_floating_ip_needs_a_router(admin: Neutron, demo: Neutron) -> None:
    net, sub = _net(demo, "10.8.0.0/24")
    port = demo.make("port", network_id=net)
    public = _public(admin)
    fip = demo.make("floatingip", floating_network_id=public)
    resp = demo("PUT", f"/floatingips/{fip['id']}", {"floatingip": {"port_id": port["id"]}})
    assert resp.status_code == 404
    assert resp.json()["NeutronError"] == {
        "type": "ExternalGatewayForFloatingIPNotFound",
        "detail": "",
        "message": f"External network {public} is not reachable from subnet {sub}.  Therefore, "
        f"cannot associate Port {port['id']} with a Floating IP.",
    }
    router = demo.make("router", external_gateway_info={"network_id": public})
    demo("PUT", f"/routers/{router['id']}/add_router_interface", {"subnet_id": sub})
    resp = demo("PUT", f"/floatingips/{fip['id']}", {"floatingip": {"port_id": port["id"]}})
    assert resp.status_code == 200, resp.text
    held = demo("PUT", f"/routers/{router['id']}/remove_router_interface", {"subnet_id": sub})
    assert held.status_code == 409


def test_bootstrap_router_reaches_private(admin: Neutron, demo: Neutron) -> None:
    routers = admin("GET", "/routers?name=router1").json()["routers"]
    assert len(routers) == 1
    port = demo.make("port", network_id=PRIVATE)
    fip = demo.make("floatingip", floating_network_id=_public(admin), port_id=port["id"])
    assert fip["port_id"] == port["id"]
    aliases = {e["alias"] for e in demo("GET", "/extensions").json()["extensions"]}
    assert {"router", "ext-gw-mode"} <= aliases
