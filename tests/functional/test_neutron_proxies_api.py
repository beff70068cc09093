"""Nova's network proxies and the server's network actions on the real neutron-server
(scripts/start-neutron.sh), through the compute API as a project's user: ``os-security-groups``
and its rules, a server booted with groups by name, ``addSecurityGroup`` /
``removeSecurityGroup``, ``os-floating-ip-pools`` / ``os-floating-ips``, ``addFloatingIp`` /
``removeFloatingIp``, ``addFixedIp`` / ``removeFixedIp``, and 2.37's ``networks: auto`` with
Neutron's auto-allocated topology (decision 0064)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from openkeel.clients.placement_embedded import EmbeddedPlacement
from openkeel.network import get_network_adapter
from openkeel.virt.fake import FakeDriver
from openkeel.virt.fake_config import FakeDriverConfig
from tests.conftest import make_services
from tests.functional.conftest import IMAGE, Cloud, start_cloud, stop_cloud
from tests.functional.test_fixed_and_floating_ips import _until
from tests.network.neutron_server import (
    HOST_ACTIVE,
    NEUTRON_OPTIONS,
    POOL,
    AutoAllocation,
    Outside,
    Sandbox,
    auto_allocation,
    neutron_project,
    new_client,
    outside,
    sandbox,
)

__all__ = ["auto_allocation", "neutron_project", "outside", "sandbox"]


@pytest.fixture
def cloud(
    tmp_path: Path, placement: EmbeddedPlacement, sandbox: Sandbox, outside: Outside
) -> Iterator[Cloud]:
    """A cloud on the neutron backend, one compute host Neutron's test driver binds ACTIVE."""
    services = make_services(tmp_path, **NEUTRON_OPTIONS, vif_plugging_timeout=0,
                             **{"neutron.default_floating_pool": POOL})  # fmt: skip
    made = start_cloud(services, placement, f"inproc://neutron-{uuid.uuid4().hex[:8]}")
    config = FakeDriverConfig(nodes=(f"{HOST_ACTIVE}-{uuid.uuid4().hex[:8]}",))
    made.add_compute(HOST_ACTIVE, driver=FakeDriver(config, sleep=lambda _s: None))
    yield made
    get_network_adapter(services.conf, services.api_db).close()
    stop_cloud(made)
    for fip in sandbox.client.list("floatingips", {"project_id": sandbox.project_id}):
        sandbox.client.delete("floatingips", fip["id"])


class User:
    """The sandbox project's user on the compute API."""

    def __init__(self, cloud: Cloud, box: Sandbox) -> None:
        self.cloud, self.token = cloud, f"user:{box.project_id}"

    def call(self, method: str, path: str, body: Any = None, version: str = "2.35") -> Any:
        return self.cloud.api.request(method, f"/v2.1{path}", json=body, version=version,
                                      token=self.token)  # fmt: skip

    def action(self, sid: str, body: Any, version: str = "2.43") -> Any:
        return self.call("POST", f"/servers/{sid}/action", body, version)

    def addresses(self, sid: str) -> list[str]:
        server = self.call("GET", f"/servers/{sid}").json()["server"]
        return sorted(a["addr"] for found in server["addresses"].values() for a in found)


def _port_groups(box: Sandbox, sid: str) -> list[str]:
    (port,) = box.client.list("ports", {"device_id": sid})
    return sorted(port["security_groups"])


def _boot(user: User, box: Sandbox, **extra: Any) -> str:
    body = {"server": {"name": "vm", "imageRef": IMAGE, "flavorRef": "1",
                       "networks": [{"uuid": box.private["id"]}], **extra}}  # fmt: skip
    resp = user.call("POST", "/servers", body, version="2.37")
    assert resp.status_code == 202, resp.text
    sid = str(resp.json()["server"]["id"])
    assert user.cloud.wait(sid)["status"] == "ACTIVE"
    return sid


def _delete(user: User, sid: str) -> None:
    assert user.call("DELETE", f"/servers/{sid}").status_code == 204
    user.cloud.wait(sid, gone=True)


def test_security_group_proxies_and_a_servers_groups(cloud: Cloud, sandbox: Sandbox) -> None:
    user = User(cloud, sandbox)
    made = user.call("POST", "/os-security-groups",
                     {"security_group": {"name": "web", "description": "the web tier"}})  # fmt: skip
    assert made.status_code == 200, made.text
    web = made.json()["security_group"]
    assert (web["name"], web["tenant_id"], web["rules"]) == ("web", sandbox.project_id, [])
    assert sandbox.client.show("security-groups", web["id"])["name"] == "web"
    rule = user.call("POST", "/os-security-group-rules", {"security_group_rule": {
        "parent_group_id": web["id"], "ip_protocol": "tcp", "from_port": 22, "to_port": 22,
        "cidr": "10.0.0.0/8"}})  # fmt: skip
    assert rule.status_code == 200, rule.text
    assert rule.json()["security_group_rule"]["ip_range"] == {"cidr": "10.0.0.0/8"}
    again = user.call("POST", "/os-security-group-rules", {"security_group_rule": {
        "parent_group_id": web["id"], "ip_protocol": "tcp", "from_port": 22, "to_port": 22,
        "cidr": "10.0.0.0/8"}})  # fmt: skip
    assert again.status_code == 400 and "already exists" in again.text
    listed = user.call("GET", "/os-security-groups").json()["security_groups"]
    assert sorted(g["name"] for g in listed) == ["default", "web"]
    shown = user.call("GET", f"/os-security-groups/{web['id']}").json()["security_group"]
    assert [(r["ip_protocol"], r["from_port"], r["to_port"]) for r in shown["rules"]] == [("tcp", 22, 22)]  # fmt: skip
    assert user.call("GET", f"/os-security-groups/{uuid.uuid4()}").status_code == 404
    assert user.call("GET", "/os-security-groups", version="2.36").status_code == 404

    # a server booted with the group by name: its port has the group's id
    sid = _boot(user, sandbox, security_groups=[{"name": "web"}])
    assert _port_groups(sandbox, sid) == [web["id"]]
    groups = user.call("GET", f"/servers/{sid}/os-security-groups").json()["security_groups"]
    assert [g["name"] for g in groups] == ["web"]
    server = user.call("GET", f"/servers/{sid}").json()["server"]
    assert server["security_groups"] == [{"name": "web"}]
    # in use: Neutron's 409, Nova's 400
    in_use = user.call("DELETE", f"/os-security-groups/{web['id']}")
    assert in_use.status_code == 400, in_use.text

    (default,) = [g for g in listed if g["name"] == "default"]
    # the project's default group is not its to delete (Neutron's 409 for its token, Nova's 400)
    assert user.call("DELETE", f"/os-security-groups/{default['id']}").status_code == 400
    assert user.action(sid, {"addSecurityGroup": {"name": "default"}}).status_code == 202
    assert _port_groups(sandbox, sid) == sorted([web["id"], default["id"]])
    assert user.action(sid, {"removeSecurityGroup": {"name": "web"}}).status_code == 202
    assert _port_groups(sandbox, sid) == [default["id"]]
    assert user.action(sid, {"removeSecurityGroup": {"name": "web"}}).status_code == 404
    assert user.action(sid, {"addSecurityGroup": {"name": "nope"}}).status_code == 404
    assert user.call("DELETE", f"/os-security-groups/{web['id']}").status_code == 202
    assert user.call("GET", f"/os-security-groups/{web['id']}").status_code == 404
    _delete(user, sid)


def test_floating_ip_proxies_and_actions(cloud: Cloud, sandbox: Sandbox, outside: Outside) -> None:
    user = User(cloud, sandbox)
    pools = user.call("GET", "/os-floating-ip-pools").json()["floating_ip_pools"]
    assert {"name": POOL} in pools
    assert user.call("POST", "/os-floating-ips", {"pool": "no-such-pool"}).status_code == 404
    made = user.call("POST", "/os-floating-ips", {})  # the default pool
    assert made.status_code == 200, made.text
    fip = made.json()["floating_ip"]
    assert (fip["pool"], fip["instance_id"], fip["fixed_ip"]) == (POOL, None, None)
    address = fip["ip"]
    assert sandbox.client.show("floatingips", fip["id"])["floating_ip_address"] == address

    sid = _boot(user, sandbox)
    (fixed,) = user.addresses(sid)
    added = user.action(sid, {"addFloatingIp": {"address": address}})
    assert added.status_code == 202, added.text
    # Nova's view of Neutron's floating IP, and the server's addresses after network-changed
    shown = user.call("GET", f"/os-floating-ips/{fip['id']}").json()["floating_ip"]
    assert (shown["instance_id"], shown["fixed_ip"]) == (sid, fixed)
    _until(lambda: user.addresses(sid) == sorted([fixed, address]), "the floating IP shown")
    listed = user.call("GET", "/os-floating-ips").json()["floating_ips"]
    assert [(f["ip"], f["instance_id"]) for f in listed] == [(address, sid)]
    other = str(uuid.uuid4())
    removed_elsewhere = user.action(other, {"removeFloatingIp": {"address": address}})
    assert removed_elsewhere.status_code == 409  # as Nova: not associated with that server
    removed = user.action(sid, {"removeFloatingIp": {"address": address}})
    assert removed.status_code == 202, removed.text
    _until(lambda: user.addresses(sid) == [fixed], "the floating IP gone")
    # no server holds it now: Nova checks the policy against no project (a user's 403)
    assert user.action(sid, {"removeFloatingIp": {"address": address}}).status_code == 403
    assert user.call("DELETE", f"/os-floating-ips/{fip['id']}").status_code == 202
    assert user.call("GET", f"/os-floating-ips/{fip['id']}").status_code == 404
    assert user.action(sid, {"addFloatingIp": {"address": address}}).status_code == 404
    _delete(user, sid)


def test_fixed_ip_actions(cloud: Cloud, sandbox: Sandbox) -> None:
    user = User(cloud, sandbox)
    sid = _boot(user, sandbox)
    (first,) = user.addresses(sid)
    added = user.action(sid, {"addFixedIp": {"networkId": sandbox.private["id"]}})
    assert added.status_code == 202, added.text
    _until(lambda: len(user.addresses(sid)) == 2, "the second fixed IP")
    (new,) = [a for a in user.addresses(sid) if a != first]
    (port,) = sandbox.client.list("ports", {"device_id": sid})
    assert sorted(f["ip_address"] for f in port["fixed_ips"]) == sorted([first, new])
    removed = user.action(sid, {"removeFixedIp": {"address": new}})
    assert removed.status_code == 202, removed.text
    _until(lambda: user.addresses(sid) == [first], "the fixed IP removed")
    _delete(user, sid)
    assert sandbox.ports() == []


# One default external network and subnet pool per Neutron: alone (see
# tests/network/test_neutron_auto_allocate.py).
@pytest.mark.serial
def test_auto_boots_on_the_auto_allocated_topology(
    cloud: Cloud, auto_allocation: AutoAllocation
) -> None:
    project = uuid.uuid4().hex  # a project with no network of its own
    box = Sandbox(new_client(), project)
    user = User(cloud, box)
    body = {"server": {"name": "vm", "imageRef": IMAGE, "flavorRef": "1", "networks": "auto"}}
    booted: list[str] = []
    try:
        refused = user.call("POST", "/servers", body, version="2.37")
        if refused.status_code == 202:  # a failure must not leave a server on someone's network
            booted.append(refused.json()["server"]["id"])
        assert refused.status_code == 400
        assert refused.json()["badRequest"]["message"] == (
            f"Unable to automatically allocate a network for project {project}"
        )
        auto_allocation.require(box.client, True)
        made = user.call("POST", "/servers", body, version="2.37")
        assert made.status_code == 202, made.text
        sid = made.json()["server"]["id"]
        booted.append(sid)
        assert cloud.wait(sid)["status"] == "ACTIVE"
        (network,) = box.client.list("networks", {"project_id": project})
        server = user.call("GET", f"/servers/{sid}").json()["server"]
        assert list(server["addresses"]) == [network["name"]]
        _delete(user, booted.pop())
        assert box.ports() == [] or all(p["device_owner"].startswith("network:") for p in box.ports())  # fmt: skip
    finally:  # Neutron's DELETE of a topology needs the default external network still there
        for leftover in booted:
            _delete(user, leftover)
        auto_allocation.forget(box.client, project)
        auto_allocation.require(box.client, False)
        box.cleanup()
        box.client.close()
