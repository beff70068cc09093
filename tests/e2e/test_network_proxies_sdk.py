"""What Nova's clients still send to its network proxies and the fixed/floating IP actions,
against a running all-in-one: openstacksdk's compute proxy pinned to 2.43 (``add_fixed_ip_to_server``
... the calls python-novaclient and the ``openstack`` CLI no longer have), the floating IP made
in the network service as the CLI makes it, and the 2.35 proxies over the compute API's REST
(as the CLI's compute fallback sends them)."""

from __future__ import annotations

import time
from typing import Any

import pytest

from openkeel.db.image_catalog import DEFAULT_IMAGE
from tests.e2e.conftest import RunningCloud

DEADLINE = 60.0


def _until(check: Any, what: str) -> None:
    deadline = time.monotonic() + DEADLINE
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.2)  # polling a real server's casts, bounded by the deadline


# openstacksdk warns (PendingDeprecationWarning) about its own internals as it works.
@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")
def test_sdk_fixed_and_floating_ips_and_proxies(cloud: RunningCloud) -> None:
    openstack = pytest.importorskip("openstack", reason="pip install -e '.[oracle]'")
    conn = openstack.connect(
        auth_url=f"{cloud.root}/identity/v3", username="admin", password=cloud.admin_password,
        project_name="admin", user_domain_id="default", project_domain_id="default",
        identity_api_version="3", compute_api_version="2.43",
    )  # fmt: skip
    try:
        _actions(conn)
        _proxies(conn)
    finally:
        conn.close()
        conn.session.session.close()  # the test's leak check counts the kept-alive socket


def _addresses(conn: Any, server_id: str) -> list[str]:
    server = conn.compute.get_server(server_id)
    return [a["addr"] for found in server.addresses.values() for a in found]


def _actions(conn: Any) -> None:
    server = conn.compute.create_server(name="proxy-vm", image_id=DEFAULT_IMAGE.id,
                                        flavor_id="1", networks="auto")  # fmt: skip
    server = conn.compute.wait_for_server(server, wait=DEADLINE)
    [first] = _addresses(conn, server.id)
    private = conn.network.find_network("private")
    conn.compute.add_fixed_ip_to_server(server, private.id)
    _until(lambda: len(_addresses(conn, server.id)) == 2, "the second fixed IP")
    [added] = [a for a in _addresses(conn, server.id) if a != first]
    conn.compute.remove_fixed_ip_from_server(server, added)
    _until(lambda: _addresses(conn, server.id) == [first], "the fixed IP removed")

    public = conn.network.find_network("public")
    fip = conn.network.create_ip(floating_network_id=public.id)
    conn.compute.add_floating_ip_to_server(server, fip.floating_ip_address)
    _until(lambda: fip.floating_ip_address in _addresses(conn, server.id), "the floating IP")
    assert conn.network.get_ip(fip.id).fixed_ip_address == first
    conn.compute.remove_floating_ip_from_server(server, fip.floating_ip_address)
    _until(lambda: fip.floating_ip_address not in _addresses(conn, server.id), "it removed")
    conn.network.delete_ip(fip)
    conn.compute.delete_server(server)
    conn.compute.wait_for_delete(server, wait=DEADLINE)


def _proxies(conn: Any) -> None:
    def call(method: str, path: str, version: str = "2.35", **body: Any) -> Any:
        return conn.compute.request(path, method, json=body or None, microversion=version)

    made = call("POST", "/os-security-groups",
                security_group={"name": "sdk-proxy", "description": "via Nova"})  # fmt: skip
    assert made.status_code == 200, made.text
    group = made.json()["security_group"]
    rule = call("POST", "/os-security-group-rules", security_group_rule={
        "parent_group_id": group["id"], "ip_protocol": "tcp", "from_port": 22, "to_port": 22,
        "cidr": "10.0.0.0/8"})  # fmt: skip
    assert rule.status_code == 200, rule.text
    listed = call("GET", "/os-security-groups").json()["security_groups"]
    assert "sdk-proxy" in {g["name"] for g in listed}
    # The same group through the network service, as Neutron shows it.
    assert conn.network.get_security_group(group["id"]).name == "sdk-proxy"
    assert call("GET", "/os-security-groups", "2.36").status_code == 404
    assert call("DELETE", f"/os-security-groups/{group['id']}").status_code == 202
    pools = call("GET", "/os-floating-ip-pools").json()["floating_ip_pools"]
    assert {"name": "public"} in pools
    fip = call("POST", "/os-floating-ips", pool="public")
    assert fip.status_code == 200, fip.text
    fip_id = fip.json()["floating_ip"]["id"]
    assert conn.network.get_ip(fip_id).floating_ip_address == fip.json()["floating_ip"]["ip"]
    assert call("DELETE", f"/os-floating-ips/{fip_id}").status_code == 202
    assert "private" in {n["label"] for n in call("GET", "/os-tenant-networks").json()["networks"]}
