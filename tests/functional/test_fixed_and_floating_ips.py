"""addFixedIp / removeFixedIp and addFloatingIp / removeFloatingIp across the roles: the host
changes the port (fixed) or is told by a network-changed event (floating), and the server's
addresses follow."""

from __future__ import annotations

import time
from typing import Any

from openkeel.network.adapter import Requester
from openkeel.network.factory import get_network_adapter
from openkeel.network.flat import FlatNetwork
from tests.functional.conftest import Cloud

PRIVATE = "3b9bc1d4-7b0a-4c41-8f2b-0d0a6e1c0001"


def _addresses(cloud: Cloud, sid: str) -> list[dict[str, Any]]:
    server = cloud.api.get(f"/v2.1/servers/{sid}").json()["server"]
    return [a for found in server["addresses"].values() for a in found]


def _until(check: Any, what: str) -> None:
    deadline = time.monotonic() + 30
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)  # polling an RPC cast's effect, bounded by the deadline


def test_fixed_ip_added_and_removed(cloud: Cloud) -> None:
    sid = cloud.boot("fixed-1", networks="auto")["id"]
    assert cloud.wait(sid)["status"] == "ACTIVE"
    [first] = _addresses(cloud, sid)
    action = f"/v2.1/servers/{sid}/action"
    added = cloud.api.post(action, {"addFixedIp": {"networkId": PRIVATE}}, version="2.43")
    assert added.status_code == 202, added.text
    _until(lambda: len(_addresses(cloud, sid)) == 2, "the second fixed IP")
    [new] = [a["addr"] for a in _addresses(cloud, sid) if a["addr"] != first["addr"]]
    removed = cloud.api.post(action, {"removeFixedIp": {"address": new}}, version="2.43")
    assert removed.status_code == 202
    _until(lambda: _addresses(cloud, sid) == [first], "the fixed IP removed")


def test_floating_ip_associated_and_disassociated(cloud: Cloud) -> None:
    adapter = get_network_adapter(cloud.services.conf, cloud.services.api_db)
    assert isinstance(adapter, FlatNetwork)
    adapter.service.bootstrap("admin", {"id": PRIVATE})  # the external network, public
    sid = cloud.boot("floating-1", networks="auto")["id"]
    assert cloud.wait(sid)["status"] == "ACTIVE"
    fip = cloud.api.post("/v2.1/os-floating-ips", {"pool": "public"}, version="2.35")
    assert fip.status_code == 200, fip.text
    address = fip.json()["floating_ip"]["ip"]
    action = f"/v2.1/servers/{sid}/action"
    added = cloud.api.post(action, {"addFloatingIp": {"address": address}}, version="2.43")
    assert added.status_code == 202, added.text

    def floating() -> list[str]:
        return [a["addr"] for a in _addresses(cloud, sid) if a["addr"].startswith("172.24.4.")]

    _until(lambda: floating() == [address], "the floating IP in the server's addresses")
    project = cloud.api.get(f"/v2.1/servers/{sid}").json()["server"]["tenant_id"]
    listed = adapter.list_floating_ips(Requester(project))
    assert [f["instance_id"] for f in listed] == [sid]
    removed = cloud.api.post(action, {"removeFloatingIp": {"address": address}}, version="2.43")
    assert removed.status_code == 202, removed.text
    _until(lambda: floating() == [], "the floating IP gone from the server's addresses")
    fip_id = fip.json()["floating_ip"]["id"]
    assert cloud.api.delete(f"/v2.1/os-floating-ips/{fip_id}", version="2.35").status_code == 202


def test_deleting_a_shelved_offloaded_server_releases_its_port(cloud: Cloud) -> None:
    adapter = get_network_adapter(cloud.services.conf, cloud.services.api_db)
    assert isinstance(adapter, FlatNetwork)
    sid = cloud.boot("offloaded-1", networks="auto")["id"]
    assert cloud.wait(sid)["status"] == "ACTIVE"
    assert cloud.api.post(f"/v2.1/servers/{sid}/action", {"shelve": None}).status_code == 202
    _until(lambda: cloud.api.get(f"/v2.1/servers/{sid}").json()["server"]["status"]
           == "SHELVED_OFFLOADED", "the offload")  # fmt: skip
    assert adapter.store.list("ports", device_id=sid)  # an offloaded server keeps its port
    assert cloud.api.delete(f"/v2.1/servers/{sid}").status_code == 204
    cloud.wait(sid, gone=True)
    assert adapter.store.list("ports", device_id=sid) == []
