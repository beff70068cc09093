"""The auto-allocated topology of the embedded network API (decision 0074): the bootstrap's
``public`` is the default external network; a project's GET makes its network, subnet and
router once; dry run; DELETE; Neutron's errors."""

from __future__ import annotations

from typing import Any

from tests.network_api.conftest import Neutron, error

TOPOLOGY = "/auto-allocated-topology"
NO_DEFAULT = ("AutoAllocationFailure", "Deployment error: No default router:external network.")


def _public(admin: Neutron) -> dict[str, Any]:
    return dict(admin("GET", "/networks?name=public").json()["networks"][0])


def test_public_is_the_default_external_network(admin: Neutron, demo: Neutron) -> None:
    assert _public(admin)["is_default"] is True
    private = admin("GET", "/networks?name=private").json()["networks"][0]
    assert "is_default" not in private  # Neutron shows it on external networks only
    ext = admin.make("network", name="ext2", **{"router:external": True})
    assert ext["is_default"] is False
    resp = admin("PUT", f"/networks/{ext['id']}", {"network": {"is_default": True}})
    message = f"A default external network already exists: {_public(admin)['id']}."
    assert error(resp, 409) == ("DefaultExternalNetworkExists", message)
    resp = admin("POST", "/networks", {"network": {"name": "x", "is_default": True}})
    assert error(resp, 409) == ("DefaultExternalNetworkExists", message)
    resp = demo("POST", "/networks", {"network": {"name": "x", "is_default": True}})
    assert error(resp, 403)[1] == "(rule:create_network:is_default) is disallowed by policy"
    resp = admin("PUT", f"/networks/{_public(admin)['id']}", {"network": {"is_default": False}})
    assert resp.json()["network"]["is_default"] is False
    resp = admin("PUT", f"/networks/{ext['id']}", {"network": {"is_default": True}})
    assert resp.json()["network"]["is_default"] is True


def test_a_project_gets_its_topology_once(admin: Neutron, demo: Neutron, other: Neutron) -> None:
    resp = demo("GET", f"{TOPOLOGY}/demo?fields=dry-run")
    assert resp.json() == {"auto_allocated_topology": {"id": "dry-run=pass", "project_id": "demo"}}
    assert demo("GET", "/networks?project_id=demo").json()["networks"] == []
    first = demo("GET", f"{TOPOLOGY}/demo").json()["auto_allocated_topology"]
    net = first["id"]
    assert first == {"id": net, "tenant_id": "demo", "project_id": "demo"}
    assert demo("GET", f"{TOPOLOGY}/None").json()["auto_allocated_topology"]["id"] == net
    network = demo("GET", f"/networks/{net}").json()["network"]
    assert (network["name"], network["admin_state_up"], network["shared"]) == (
        "auto_allocated_network", True, False)  # fmt: skip
    (subnet,) = demo("GET", f"/subnets?network_id={net}").json()["subnets"]
    assert (subnet["name"], subnet["cidr"]) == ("auto_allocated_subnet_v4", "10.128.0.0/26")
    (router,) = demo("GET", "/routers").json()["routers"]
    assert router["name"] == "auto_allocated_router"
    assert router["external_gateway_info"]["network_id"] == _public(admin)["id"]
    (iface,) = demo("GET", f"/ports?network_id={net}").json()["ports"]
    assert (iface["device_id"], iface["fixed_ips"][0]["ip_address"]) == (router["id"], "10.128.0.1")
    theirs = other("GET", f"{TOPOLOGY}/other").json()["auto_allocated_topology"]["id"]
    (subnet,) = other("GET", f"/subnets?network_id={theirs}").json()["subnets"]
    assert subnet["cidr"] == "10.128.0.64/26"
    assert error(demo("GET", f"{TOPOLOGY}/other"), 403) == ("NotAuthorized", "Not authorized.")
    assert error(demo("DELETE", f"{TOPOLOGY}/other"), 403) == ("NotAuthorized", "Not authorized.")
    resp = demo("GET", f"{TOPOLOGY}/demo?fields=id")
    assert error(resp, 400) == ("BadRequest", "Bad auto_allocate request: Unrecognized field.")
    assert demo("DELETE", f"{TOPOLOGY}/demo").status_code == 204
    assert demo("GET", f"/networks/{net}").status_code == 404
    assert demo("GET", "/routers").json()["routers"] == []
    assert demo("DELETE", f"{TOPOLOGY}/demo").status_code == 204
    again = admin("GET", f"{TOPOLOGY}/demo").json()["auto_allocated_topology"]["id"]
    assert again != net


def test_no_default_external_network(admin: Neutron, demo: Neutron) -> None:
    admin("PUT", f"/networks/{_public(admin)['id']}", {"network": {"is_default": False}})
    assert error(demo("GET", f"{TOPOLOGY}/demo"), 409) == NO_DEFAULT
    assert error(demo("GET", f"{TOPOLOGY}/demo?fields=dry-run"), 409) == NO_DEFAULT
    assert error(demo("DELETE", f"{TOPOLOGY}/demo"), 409) == NO_DEFAULT
    assert demo("GET", "/networks?project_id=demo").json()["networks"] == []


def test_a_default_external_network_without_subnet(admin: Neutron, demo: Neutron) -> None:
    """As Neutron: the router's gateway on it has no address."""
    admin("PUT", f"/networks/{_public(admin)['id']}", {"network": {"is_default": False}})
    bare = admin.make("network", name="bare", is_default=True, **{"router:external": True})
    assert demo("GET", f"{TOPOLOGY}/demo").status_code == 200
    (router,) = demo("GET", "/routers").json()["routers"]
    gateway = router["external_gateway_info"]
    assert (gateway["network_id"], gateway["external_fixed_ips"]) == (bare["id"], [])


def test_the_extension_is_announced(demo: Neutron) -> None:
    resp = demo("GET", "/extensions/auto-allocated-topology")
    assert resp.json()["extension"]["name"] == "Auto Allocated Topology Services"
