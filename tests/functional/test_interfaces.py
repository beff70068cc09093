"""Interfaces of a server across the roles, on both transports: attach a port on a network
(made by compute, deleted at detach) or the user's own port (bound, then unbound), the guest's
ports and the server's addresses follow; Nova's errors for bad requests, states and drivers."""

from __future__ import annotations

import time
from typing import Any

from openkeel.network.embedded.service import Caller, NetworkService
from openkeel.network.factory import get_network_adapter
from openkeel.network.flat import FlatNetwork
from openkeel.virt.errors import NotSupported
from tests.functional.conftest import Cloud

PRIVATE = "3b9bc1d4-7b0a-4c41-8f2b-0d0a6e1c0001"


def _network(cloud: Cloud) -> NetworkService:
    adapter = get_network_adapter(cloud.services.conf, cloud.services.api_db)
    assert isinstance(adapter, FlatNetwork)
    return adapter.service


def _interfaces(cloud: Cloud, sid: str, version: str = "2.70") -> Any:
    resp = cloud.api.get(f"/v2.1/servers/{sid}/os-interface", version=version)
    assert resp.status_code == 200, resp.text
    return resp.json()["interfaceAttachments"]


def _guest_ports(cloud: Cloud, sid: str) -> set[str]:
    """The ports plugged into the fake driver's guest."""
    (service,) = cloud.computes.values()
    return set(service.host.driver._guest(sid).ports)  # type: ignore[attr-defined]


def _until(check: Any, what: str) -> None:
    deadline = time.monotonic() + 30
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)  # polling an RPC cast's effect, bounded by the deadline


def test_attach_on_a_network_and_detach(cloud: Cloud) -> None:
    sid = cloud.boot("if-1", networks="auto")["id"]
    assert cloud.wait(sid)["status"] == "ACTIVE"
    [first] = _interfaces(cloud, sid)
    net = _network(cloud).create_network(Caller("admin", False), {"name": "extra"})
    _network(cloud).create_subnet(Caller("admin", False), {
        "network_id": net["id"], "cidr": "192.168.9.0/24", "ip_version": 4})  # fmt: skip
    body = {"interfaceAttachment": {"net_id": net["id"], "fixed_ips": [{"ip_address": "192.168.9.9"}],
                                    "tag": "extra-nic"}}  # fmt: skip
    resp = cloud.api.post(f"/v2.1/servers/{sid}/os-interface", body, version="2.70")
    assert resp.status_code == 200, resp.text
    attached = resp.json()["interfaceAttachment"]
    assert attached["net_id"] == net["id"] and attached["tag"] == "extra-nic"
    assert attached["fixed_ips"][0]["ip_address"] == "192.168.9.9"
    assert attached["port_state"] == "ACTIVE"
    assert {i["port_id"] for i in _interfaces(cloud, sid)} == {
        first["port_id"],
        attached["port_id"],
    }
    assert _guest_ports(cloud, sid) == {first["port_id"], attached["port_id"]}
    server = cloud.api.get(f"/v2.1/servers/{sid}").json()["server"]
    assert server["addresses"]["extra"][0]["addr"] == "192.168.9.9"
    shown = cloud.api.get(f"/v2.1/servers/{sid}/os-interface/{attached['port_id']}", version="2.69")
    assert "tag" not in shown.json()["interfaceAttachment"]

    resp = cloud.api.delete(f"/v2.1/servers/{sid}/os-interface/{attached['port_id']}")
    assert resp.status_code == 202
    _until(lambda: cloud.events(sid, "detach_interface") == {"compute_detach_interface": "Success"},
           "the detach to finish")  # fmt: skip
    assert len(_interfaces(cloud, sid)) == 1
    assert _guest_ports(cloud, sid) == {first["port_id"]}
    assert _network(cloud).store.get("ports", attached["port_id"]) is None  # made by compute
    assert "extra" not in cloud.api.get(f"/v2.1/servers/{sid}").json()["server"]["addresses"]
    assert cloud.events(sid, "attach_interface") == {"compute_attach_interface": "Success"}


def test_the_users_port_is_bound_then_unbound(cloud: Cloud) -> None:
    sid = cloud.boot("if-2", networks="auto")["id"]
    assert cloud.wait(sid)["status"] == "ACTIVE"
    port = _network(cloud).create_port(Caller("admin", False), {"network_id": PRIVATE})
    resp = cloud.api.post(f"/v2.1/servers/{sid}/os-interface",
                          {"interfaceAttachment": {"port_id": port["id"]}})  # fmt: skip
    assert resp.status_code == 200, resp.text
    other = cloud.boot("if-3", networks="auto")["id"]
    assert cloud.wait(other)["status"] == "ACTIVE"
    taken = cloud.api.post(f"/v2.1/servers/{other}/os-interface",
                           {"interfaceAttachment": {"port_id": port["id"]}})  # fmt: skip
    assert taken.status_code == 409 and port["id"] in taken.text
    assert cloud.api.delete(f"/v2.1/servers/{sid}/os-interface/{port['id']}").status_code == 202
    _until(lambda: cloud.events(sid, "detach_interface") == {"compute_detach_interface": "Success"},
           "the detach to finish")  # fmt: skip
    assert len(_interfaces(cloud, sid)) == 1
    kept = _network(cloud).store.get("ports", port["id"])
    assert kept is not None and kept["device_id"] == ""


def test_errors(cloud: Cloud) -> None:
    sid = cloud.boot("if-4", networks="auto")["id"]
    assert cloud.wait(sid)["status"] == "ACTIVE"
    url = f"/v2.1/servers/{sid}/os-interface"
    both = {"interfaceAttachment": {"net_id": PRIVATE, "port_id": PRIVATE}}
    assert cloud.api.post(url, both).json()["badRequest"]["message"] == (
        "Must not input both network_id and port_id"
    )
    ip_only = {"interfaceAttachment": {"fixed_ips": [{"ip_address": "10.0.0.9"}]}}
    assert cloud.api.post(url, ip_only).json()["badRequest"]["message"] == (
        "Must input network_id when request IP address"
    )
    unknown = {"interfaceAttachment": {"net_id": "00000000-0000-4000-8000-000000000000"}}
    assert cloud.api.post(url, unknown).status_code == 404
    assert (
        cloud.api.post(url, {"interfaceAttachment": {"tag": "x"}}, version="2.48").status_code
        == 400
    )
    missing = cloud.api.get(f"{url}/00000000-0000-4000-8000-000000000000")
    assert missing.status_code == 404
    assert cloud.api.delete(f"{url}/00000000-0000-4000-8000-000000000000").status_code == 404
    # A driver without hot-plug: Nova's 400, and no port left behind.
    (service,) = cloud.computes.values()
    before = len(_network(cloud).store.list("ports"))

    def refuse(*args: Any, **kw: Any) -> None:
        raise NotSupported("attach_interface", "fake")

    service.host.driver.attach_interface = refuse  # type: ignore[method-assign]
    resp = cloud.api.post(url, {"interfaceAttachment": {"net_id": PRIVATE}})
    assert resp.status_code == 400, resp.text
    assert "not supported" in resp.json()["badRequest"]["message"]
    assert len(_network(cloud).store.list("ports")) == before
    # A stopped server may change interfaces; a locked one may not (for its owner).
    assert cloud.api.post(
        f"/v2.1/servers/{sid}/action", {"lock": None}, token="demo:demo"
    ).status_code in (202, 404)
