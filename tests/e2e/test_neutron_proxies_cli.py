"""Real clients against an all-in-one whose network is a real neutron-server
(scripts/start-neutron.sh) and whose catalog has no network endpoint, so clients fall back on
Nova's proxies, which OpenKeel carries out in Neutron (decision 0064):

- the unchanged ``openstack`` CLI (10.x keeps the compute fallback only in its server
  commands): ``server create --nic net-id=... --security-group NAME`` (the network looked up
  through ``os-networks``, the group through ``os-security-groups``), ``server add/remove
  security group`` (``addSecurityGroup`` / ``removeSecurityGroup`` after an
  ``os-security-groups`` lookup);
- openstacksdk's compute proxy: the 2.35 routes over plain REST (``os-security-groups``,
  ``os-security-group-rules``, ``os-floating-ip-pools``, ``os-floating-ips``, 404 from 2.36)
  and its 2.43 calls ``add_floating_ip_to_server`` / ``add_fixed_ip_to_server`` and their
  removals, which python-novaclient and the CLI no longer have."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from openkeel.db.image_catalog import DEFAULT_IMAGE
from openkeel.network.neutron_client import NeutronClient, load_adapter
from tests.e2e.conftest import RunningCloud, all_in_one
from tests.e2e.test_network_cli import osc_fails
from tests.e2e.test_network_proxies_sdk import DEADLINE, _until
from tests.e2e.test_openstack_cli import osc
from tests.network.neutron_server import (
    HOST_ACTIVE,
    NEUTRON_OPTIONS,
    POOL,
    Sandbox,
    neutron_conf,
    neutron_required,
)


def _config(path: Path) -> Path:
    """nova.conf for the all-in-one: one compute host Neutron's test driver binds ACTIVE."""
    sections: dict[str, dict[str, object]] = {"DEFAULT": {"host": HOST_ACTIVE,
                                                          "vif_plugging_timeout": 0}}  # fmt: skip
    for key, value in {**NEUTRON_OPTIONS, "neutron.default_floating_pool": POOL}.items():
        group, name = key.split(".")
        sections.setdefault(group, {})[name] = ",".join(value) if isinstance(value, list) else value
    path.write_text("".join(
        f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in opts.items())
        for group, opts in sections.items()
    ))  # fmt: skip
    return path


@dataclass(frozen=True)
class Infra:
    """What the test module made in Neutron, in a project of its own: a shared network any
    project may boot on, and the external network (the pool)."""

    project_id: str
    shared: dict[str, Any]
    pool_id: str


def _client() -> NeutronClient:
    return NeutronClient(load_adapter(neutron_conf()))


@pytest.fixture(scope="module")
def infra() -> Iterator[Infra]:
    neutron_required()
    box = Sandbox(_client())
    try:  # each step its own client: a module's open pool would count as a test's sockets
        shared = box.network(f"e2e-{uuid.uuid4().hex[:6]}", cidr="10.30.0.0/24", shared=True)
        pool = box.network(POOL, cidr="172.24.50.0/24", **{"router:external": True})
    finally:
        box.client.close()
    yield Infra(box.project_id, shared, pool["id"])
    box = Sandbox(_client(), box.project_id)
    try:
        box.cleanup()
    finally:
        box.client.close()


@pytest.fixture(scope="module")
def cloud(tmp_path_factory: pytest.TempPathFactory, infra: Infra) -> Iterator[RunningCloud]:
    data = tmp_path_factory.mktemp("aio-neutron")
    conf = _config(data / "neutron.conf")
    with all_in_one(data, "--config-file", str(conf), "--hosts", "1") as running:
        yield running


@pytest.fixture
def conn(cloud: RunningCloud) -> Iterator[Any]:
    openstack = pytest.importorskip("openstack", reason="pip install -e '.[oracle]'")
    made = openstack.connect(
        auth_url=f"{cloud.root}/identity/v3", username="admin", password=cloud.admin_password,
        project_name="admin", user_domain_id="default", project_domain_id="default",
        identity_api_version="3", compute_api_version="2.43",
    )  # fmt: skip
    yield made
    made.close()
    made.session.session.close()  # the test's leak check counts the kept-alive socket


@pytest.fixture
def mine(conn: Any, infra: Infra) -> Iterator[Sandbox]:
    """The all-in-one admin's project in Neutron; what the test left there is removed."""
    box = Sandbox(_client(), str(conn.current_project_id))
    try:
        yield box
        for fip in box.client.list("floatingips", {"project_id": box.project_id}):
            box.client.delete("floatingips", fip["id"])
        box.cleanup()
        for group in box.client.list("security-groups", {"project_id": box.project_id}):
            box.client.delete("security-groups", group["id"])  # its default one too
    finally:
        box.client.close()


def _call(conn: Any, method: str, path: str, version: str = "2.35", **body: Any) -> Any:
    return conn.compute.request(path, method, json=body or None, microversion=version)


def _addresses(conn: Any, server_id: str) -> list[str]:
    server = conn.compute.get_server(server_id)
    return sorted(a["addr"] for found in server.addresses.values() for a in found)


# openstacksdk warns (PendingDeprecationWarning) about its own internals as it works.
@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")
def test_cli_server_security_groups_through_novas_proxies(
    cloud: RunningCloud, conn: Any, mine: Sandbox, infra: Infra
) -> None:
    shared = infra.shared
    made = _call(conn, "POST", "/os-security-groups",
                 security_group={"name": "cli-web", "description": "web tier"})  # fmt: skip
    assert made.status_code == 200, made.text
    group = made.json()["security_group"]
    # made by Nova's proxy in Neutron, in the user's project
    assert mine.client.show("security-groups", group["id"])["project_id"] == mine.project_id
    rule = _call(conn, "POST", "/os-security-group-rules", security_group_rule={
        "parent_group_id": group["id"], "ip_protocol": "tcp", "from_port": 22, "to_port": 22,
        "cidr": "10.0.0.0/8"})  # fmt: skip
    assert rule.status_code == 200, rule.text
    (ingress,) = [r for r in mine.client.list("security-group-rules", {"security_group_id": group["id"]})
                  if r["direction"] == "ingress"]  # fmt: skip
    assert (ingress["protocol"], ingress["port_range_min"], ingress["remote_ip_prefix"]) == ("tcp", 22, "10.0.0.0/8")  # fmt: skip

    # The CLI's fallback shows the group by what it was given first: a name gets Nova's 400
    # ("Security group id should be uuid", as Nova 34.0.0 answers it), so ids are given.
    server = osc(cloud, "server", "create", "--flavor", "m1.tiny", "--image", DEFAULT_IMAGE.id,
                 "--nic", f"net-id={shared['id']}", "--security-group", group["id"], "--wait",
                 "cli-vm")  # fmt: skip
    assert "Security group id should be uuid" in osc_fails(
        cloud, "server", "add", "security", "group", "cli-vm", "cli-web"
    )
    assert server["status"] == "ACTIVE", server
    (port,) = mine.client.list("ports", {"device_id": server["id"]})
    assert port["security_groups"] == [group["id"]]
    assert port["binding:host_id"] == HOST_ACTIVE
    (default,) = mine.client.list("security-groups", {"project_id": mine.project_id, "name": "default"})  # fmt: skip
    osc(cloud, "server", "add", "security", "group", "cli-vm", default["id"], "--no-output")
    assert sorted(mine.client.show("ports", port["id"])["security_groups"]) == sorted([group["id"], default["id"]])  # fmt: skip
    osc(cloud, "server", "remove", "security", "group", "cli-vm", group["id"], "--no-output")
    assert mine.client.show("ports", port["id"])["security_groups"] == [default["id"]]
    shown = osc(cloud, "server", "show", "cli-vm")
    assert shown["security_groups"] == [{"name": "default"}]
    osc(cloud, "server", "delete", "--wait", "cli-vm", "--no-output")
    assert mine.ports() == []
    assert _call(conn, "GET", "/os-security-groups", "2.36").status_code == 404
    assert _call(conn, "DELETE", f"/os-security-groups/{group['id']}").status_code == 202
    assert mine.client.list("security-groups", {"id": group["id"]}) == []


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")
def test_sdk_floating_and_fixed_ips_through_novas_proxies(
    conn: Any, mine: Sandbox, infra: Infra
) -> None:
    shared = infra.shared
    admin = Sandbox(mine.client, infra.project_id)
    pools = _call(conn, "GET", "/os-floating-ip-pools").json()["floating_ip_pools"]
    assert {"name": POOL} in pools
    made = _call(conn, "POST", "/os-floating-ips", pool=POOL)
    assert made.status_code == 200, made.text
    fip = made.json()["floating_ip"]
    assert mine.client.show("floatingips", fip["id"])["floating_ip_address"] == fip["ip"]
    assert _call(conn, "GET", "/os-floating-ips", "2.36").status_code == 404

    server = conn.compute.create_server(name="sdk-vm", image_id=DEFAULT_IMAGE.id, flavor_id="1",
                                        networks=[{"uuid": shared["id"]}])  # fmt: skip
    server = conn.compute.wait_for_server(server, wait=DEADLINE)
    (first,) = _addresses(conn, server.id)
    conn.compute.add_fixed_ip_to_server(server, shared["id"])
    _until(lambda: len(_addresses(conn, server.id)) == 2, "the second fixed IP")
    (added,) = [a for a in _addresses(conn, server.id) if a != first]
    (port,) = mine.client.list("ports", {"device_id": server.id})
    assert sorted(f["ip_address"] for f in port["fixed_ips"]) == sorted([first, added])
    conn.compute.remove_fixed_ip_from_server(server, added)
    _until(lambda: _addresses(conn, server.id) == [first], "the fixed IP removed")

    # Neutron routes the shared network to the pool: a router of the infra project
    router = admin.client.create("routers", {"project_id": admin.project_id,
                                             "external_gateway_info": {"network_id": infra.pool_id}})  # fmt: skip
    http = admin.client._adapter
    leg = admin.port(shared["id"])
    http.put(f"/v2.0/routers/{router['id']}/add_router_interface", json={"port_id": leg["id"]})
    try:
        conn.compute.add_floating_ip_to_server(server, fip["ip"])
        seen = mine.client.show("floatingips", fip["id"])
        assert (seen["port_id"], seen["fixed_ip_address"]) == (port["id"], first)
        _until(lambda: fip["ip"] in _addresses(conn, server.id), "the floating IP")
        shown = _call(conn, "GET", f"/os-floating-ips/{fip['id']}").json()["floating_ip"]
        assert (shown["instance_id"], shown["fixed_ip"], shown["pool"]) == (server.id, first, POOL)
        conn.compute.remove_floating_ip_from_server(server, fip["ip"])
        _until(lambda: fip["ip"] not in _addresses(conn, server.id), "the floating IP removed")
        assert mine.client.show("floatingips", fip["id"])["port_id"] is None
    finally:
        http.put(f"/v2.0/routers/{router['id']}/remove_router_interface", json={"port_id": leg["id"]})  # fmt: skip
        admin.client.update("routers", router["id"], {"external_gateway_info": {}})
        admin.client.delete("routers", router["id"])
    assert _call(conn, "DELETE", f"/os-floating-ips/{fip['id']}").status_code == 202
    assert mine.client.list("floatingips", {"id": fip["id"]}) == []
    conn.compute.delete_server(server)
    conn.compute.wait_for_delete(server, wait=DEADLINE)
    assert mine.ports() == []
