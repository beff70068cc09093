"""The os-floating-ips and os-floating-ip-pools proxies (2.1-2.35), the addFloatingIp /
removeFloatingIp actions (2.1-2.43) and the addFixedIp / removeFixedIp casts (2.1-2.43) with
Nova's answers, on the embedded network service's public network."""

from __future__ import annotations

from typing import Any

import pytest

from openkeel.api.services import ApiServices
from openkeel.network.adapter import InstanceNetRef
from openkeel.network.embedded import service as embedded
from openkeel.network.embedded.service import Caller
from openkeel.network.factory import get_network_adapter
from openkeel.network.flat import FlatNetwork
from openkeel.rpc.messages.compute import AddFixedIp, RemoveFixedIp
from tests.api.server_fakes import Recorder, create, flavor, place, wire
from tests.client import ApiClient

USER, OTHER, ADMIN = "demo:demo", "other:other", "admin:admin"
IPS, POOLS = "/v2.1/os-floating-ips", "/v2.1/os-floating-ip-pools"
PRIVATE = "3b9bc1d4-7b0a-4c41-8f2b-0d0a6e1c0001"


def _message(resp: Any) -> str:
    return str(next(iter(resp.json().values()))["message"])


@pytest.fixture
def network(services: ApiServices) -> FlatNetwork:
    adapter = get_network_adapter(services.conf, services.api_db)
    assert isinstance(adapter, FlatNetwork)
    adapter.service.bootstrap("admin", {"id": PRIVATE})  # adds the external network "public"
    return adapter


def _server(api: ApiClient, services: ApiServices, network: FlatNetwork) -> tuple[str, str]:
    """An ACTIVE server of the user on host1 with one port on private; its address."""
    flavor(api)
    sid = str(create(api)["server"]["id"])
    info = network.allocate_for_instance(InstanceNetRef(sid, "demo"), [])
    place(services, sid, network_info=info)
    return sid, info[0]["network"]["subnets"][0]["ips"][0]["address"]


def _allocate(api: ApiClient, token: str = USER, **body: Any) -> Any:
    return api.post(IPS, json=body or None, token=token, version="2.35")


def test_pools_list_the_external_networks(api: ApiClient, network: FlatNetwork) -> None:
    resp = api.get(POOLS, token=USER)
    assert resp.json() == {"floating_ip_pools": [{"name": "public"}]}
    assert api.get(POOLS, token=USER, version="2.36").status_code == 404


def test_allocate_show_list_release(api: ApiClient, network: FlatNetwork) -> None:
    made = _allocate(api)
    assert made.status_code == 200, made.text
    fip = made.json()["floating_ip"]
    assert fip["pool"] == "public" and fip["instance_id"] is None and fip["fixed_ip"] is None
    assert fip["ip"].startswith("172.24.4.")
    assert api.get(f"{IPS}/{fip['id']}", token=USER).json()["floating_ip"] == fip
    assert api.get(IPS, token=USER).json()["floating_ips"] == [fip]
    assert api.get(IPS, token=OTHER).json()["floating_ips"] == []
    hidden = api.get(f"{IPS}/{fip['id']}", token=OTHER)
    assert hidden.status_code == 404
    assert _message(hidden) == f"Floating IP not found for ID {fip['id']}"
    assert api.delete(f"{IPS}/{fip['id']}", token=OTHER).status_code == 404
    assert api.delete(f"{IPS}/{fip['id']}", token=USER).status_code == 202
    assert api.get(IPS, token=USER).json()["floating_ips"] == []


def test_allocate_errors(api: ApiClient, network: FlatNetwork, monkeypatch: Any) -> None:
    unknown = _allocate(api, pool="nowhere")
    assert (unknown.status_code, _message(unknown)) == (404, "Floating IP pool not found.")
    private = _allocate(api, pool="private")  # not external: not a pool
    assert private.status_code == 404
    assert _allocate(api, pool=7).status_code == 400
    monkeypatch.setitem(embedded.QUOTAS, "floatingip", 0)
    over = _allocate(api, pool="public")
    assert (over.status_code, _message(over)) == (403, "IP allocation over quota in pool public.")
    over = _allocate(api)
    assert (over.status_code, _message(over)) == (403, "IP allocation over quota.")


def test_pool_exhausted(api: ApiClient, network: FlatNetwork) -> None:
    admin = Caller("admin", True)
    tiny = network.service.create_network(admin, {"name": "tiny", "router:external": True})
    network.service.create_subnet(admin, {"network_id": tiny["id"], "cidr": "192.0.2.0/30"})
    assert _allocate(api, pool="tiny").status_code == 200
    empty = _allocate(api, pool="tiny")
    assert (empty.status_code, _message(empty)) == (404, "No more floating IPs in pool tiny.")


def test_associate_and_disassociate(
    api: ApiClient, services: ApiServices, network: FlatNetwork
) -> None:
    _, compute = wire(services)
    sid, fixed = _server(api, services, network)
    fip = _allocate(api).json()["floating_ip"]
    action = f"/v2.1/servers/{sid}/action"
    added = api.post(action, json={"addFloatingIp": {"address": fip["ip"]}}, token=USER,
                     version="2.43")  # fmt: skip
    assert added.status_code == 202, added.text
    shown = api.get(f"{IPS}/{fip['id']}", token=USER).json()["floating_ip"]
    assert (shown["instance_id"], shown["fixed_ip"]) == (sid, fixed)
    # The server's host is told, as Neutron tells Nova, and reads its network info again.
    assert ("external_instance_event", sid) in _events(compute)
    other = api.post(action, json={"removeFloatingIp": {"address": "172.24.4.250"}},
                     token=USER, version="2.43")  # fmt: skip
    assert other.status_code == 404
    removed = api.post(action, json={"removeFloatingIp": {"address": fip["ip"]}}, token=USER,
                       version="2.43")  # fmt: skip
    assert removed.status_code == 202, removed.text
    # Unassociated: Nova's policy check then has no project to match (403 but for an admin).
    again = api.post(action, json={"removeFloatingIp": {"address": fip["ip"]}}, token=USER,
                     version="2.43")  # fmt: skip
    assert again.status_code == 403
    again = api.post(action, json={"removeFloatingIp": {"address": fip["ip"]}}, token=ADMIN,
                     version="2.43")  # fmt: skip
    assert again.status_code == 409
    assert _message(again) == f"Floating IP {fip['ip']} is not associated with instance {sid}."
    assert api.post(action, json={"addFloatingIp": {"address": fip["ip"]}}, token=USER,
                    version="2.44").status_code == 404  # fmt: skip


def _events(compute: Recorder) -> list[tuple[str, str]]:
    out = []
    for name, details in compute.calls:
        for uuid in details.get("instance_uuids", ()):
            out.append((name, uuid))
    return out


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        ({"address": "172.24.4.99"}, 404, "floating IP not found"),
        ({"address": "172.24.4.99", "fixed_address": "10.9.9.9"}, 400,
         "Specified fixed address not assigned to instance"),
        ({"address": "not-an-ip"}, 400, None),
        ({"address": "172.24.4.99", "extra": 1}, 400, None),
    ],
)  # fmt: skip
def test_add_floating_ip_errors(
    api: ApiClient, services: ApiServices, network: FlatNetwork,
    body: dict[str, Any], status: int, message: str | None,
) -> None:  # fmt: skip
    wire(services)
    sid, _ = _server(api, services, network)
    resp = api.post(f"/v2.1/servers/{sid}/action", json={"addFloatingIp": body}, token=USER)
    assert resp.status_code == status, resp.text
    if message:
        assert _message(resp) == message


def test_add_floating_ip_without_network_info(
    api: ApiClient, services: ApiServices, network: FlatNetwork
) -> None:
    wire(services)
    flavor(api)
    sid = create(api)["server"]["id"]
    place(services, sid)
    fip = _allocate(api).json()["floating_ip"]
    resp = api.post(f"/v2.1/servers/{sid}/action", json={"addFloatingIp": {"address": fip["ip"]}},
                    token=USER)  # fmt: skip
    assert (resp.status_code, _message(resp)) == (400, "Instance network is not ready yet")


def test_fixed_ip_actions_cast_to_the_host(
    api: ApiClient, services: ApiServices, network: FlatNetwork
) -> None:
    _, compute = wire(services)
    sid, fixed = _server(api, services, network)
    action = f"/v2.1/servers/{sid}/action"
    assert api.post(action, json={"addFixedIp": {"networkId": PRIVATE}}, token=USER,
                    version="2.43").status_code == 202  # fmt: skip
    assert api.post(action, json={"removeFixedIp": {"address": fixed}},
                    token=USER).status_code == 202  # fmt: skip
    sent = [d["message"] for _, d in compute.calls if "message" in d]
    assert sent == [AddFixedIp(sid, PRIVATE), RemoveFixedIp(sid, fixed)]
    for body in ({"addFixedIp": {}}, {"addFixedIp": {"networkId": ""}},
                 {"removeFixedIp": {"address": "x"}}):  # fmt: skip
        assert api.post(action, json=body, token=USER).status_code == 400, body
    late = api.post(action, json={"addFixedIp": {"networkId": PRIVATE}}, token=USER,
                    version="2.44")  # fmt: skip
    assert late.status_code == 404
    assert api.post(action, json={"addFixedIp": {"networkId": PRIVATE}},
                    token=OTHER).status_code == 404  # fmt: skip
    locked = api.post(action, json={"lock": None}, token=USER)
    assert locked.status_code == 202
    assert api.post(action, json={"addFixedIp": {"networkId": PRIVATE}},
                    token=USER).status_code == 409  # fmt: skip


def test_tenant_networks(api: ApiClient, network: FlatNetwork) -> None:
    mine = network.service.create_network(Caller("demo", False), {"name": "demo-net"})
    theirs = network.service.create_network(Caller("other", False), {"name": "other-net"})
    listed = api.get("/v2.1/os-tenant-networks", token=USER, version="2.35").json()["networks"]
    assert {n["label"] for n in listed} == {"private", "public", "demo-net"}
    assert all(n["cidr"] == "None" for n in listed)
    shown = api.get(f"/v2.1/os-tenant-networks/{mine['id']}", token=USER).json()
    assert shown == {"network": {"id": mine["id"], "cidr": "None", "label": "demo-net"}}
    hidden = api.get(f"/v2.1/os-tenant-networks/{theirs['id']}", token=USER)
    assert (hidden.status_code, _message(hidden)) == (404, "Network not found")
    assert api.get("/v2.1/os-tenant-networks", version="2.36").status_code == 404
    assert api.post("/v2.1/os-tenant-networks", json={}).status_code == 410
    assert api.get("/v2.1/os-tenant-networks?foo=1", token=USER).status_code == 200
