"""Neutron's multiple port bindings (``binding-extended``) on the embedded network API
(decision 0072): an inactive binding beside the active one, activation swapping them, delete,
and Neutron's refusals (not a compute port, already there, already active, unknown host,
not an admin)."""

from __future__ import annotations

import uuid
from typing import Any

from tests.network_api.conftest import PRIVATE, Neutron


def _bindings(admin: Neutron, port_id: str) -> dict[str, dict[str, Any]]:
    resp = admin("GET", f"/ports/{port_id}/bindings")
    assert resp.status_code == 200, resp.text
    return {b["host"]: b for b in resp.json()["bindings"]}


def _compute_port(admin: Neutron, host: str = "src") -> dict[str, Any]:
    return admin.make("port", network_id=PRIVATE, device_id=str(uuid.uuid4()),
                      device_owner="compute:nova", **{"binding:host_id": host})  # fmt: skip


def test_the_extension_is_listed(demo: Neutron) -> None:
    assert demo("GET", "/extensions/binding-extended").status_code == 200


def test_bind_inactive_activate_and_delete(admin: Neutron) -> None:
    port = _compute_port(admin)
    url = f"/ports/{port['id']}/bindings"
    made = admin("POST", url, {"binding": {"host": "dest", "profile": {"k": "v"}}})
    assert made.status_code == 201, made.text
    assert made.json()["binding"] == {"host": "dest", "vif_type": "bridge", "vnic_type": "normal",
                                      "status": "INACTIVE", "profile": {"k": "v"},
                                      "vif_details": {}}  # fmt: skip
    assert {h: b["status"] for h, b in _bindings(admin, port["id"]).items()} == {"src": "ACTIVE", "dest": "INACTIVE"}  # fmt: skip
    assert admin("GET", f"{url}/dest").json()["binding"]["status"] == "INACTIVE"
    assert admin("GET", f"/ports/{port['id']}").json()["port"]["binding:host_id"] == "src"

    again = admin("POST", url, {"binding": {"host": "dest"}})
    assert (again.status_code, again.json()["NeutronError"]["type"]) == (409, "PortBindingAlreadyExists")  # fmt: skip

    active = admin("PUT", f"{url}/dest/activate")
    assert active.status_code == 200, active.text
    assert (active.json()["host"], active.json()["status"]) == ("dest", "ACTIVE")
    shown = admin("GET", f"/ports/{port['id']}").json()["port"]
    assert (shown["binding:host_id"], shown["binding:profile"]) == ("dest", {"k": "v"})
    bindings = _bindings(admin, port["id"])
    assert {h: (b["status"], b["vif_type"]) for h, b in bindings.items()} == {
        "dest": ("ACTIVE", "bridge"), "src": ("INACTIVE", "unbound")}  # fmt: skip
    twice = admin("PUT", f"{url}/dest/activate")
    assert (twice.status_code, twice.json()["NeutronError"]["type"]) == (409, "PortBindingAlreadyActive")  # fmt: skip

    assert admin("DELETE", f"{url}/src").status_code == 204
    assert set(_bindings(admin, port["id"])) == {"dest"}
    gone = admin("DELETE", f"{url}/src")
    assert (gone.status_code, gone.json()["NeutronError"]["type"]) == (404, "PortBindingNotFound")
    missing = admin("PUT", f"{url}/elsewhere/activate")
    assert missing.json()["NeutronError"]["message"] == (
        f"Binding for port {port['id']} for host elsewhere could not be found.")  # fmt: skip
    # a port's delete takes its bindings with it
    admin("POST", url, {"binding": {"host": "third"}})
    assert admin("DELETE", f"/ports/{port['id']}").status_code == 204
    assert admin("GET", url).status_code == 404


def test_refusals(admin: Neutron, demo: Neutron) -> None:
    plain = admin.make("port", network_id=PRIVATE)
    resp = admin("POST", f"/ports/{plain['id']}/bindings", {"binding": {"host": "h"}})
    assert resp.status_code == 400
    assert "Operation only valid on compute and shared filesystem ports." in resp.text
    port = _compute_port(admin)
    resp = demo("GET", f"/ports/{port['id']}/bindings")
    assert (resp.status_code, resp.json()["NeutronError"]["type"]) == (403, "PolicyNotAuthorized")
    resp = admin("POST", f"/ports/{port['id']}/bindings", {"binding": {"vnic_type": "normal"}})
    assert resp.status_code == 400 and "Required attribute 'host'" in resp.text
    resp = admin("GET", f"/ports/{uuid.uuid4()}/bindings")
    assert (resp.status_code, resp.json()["NeutronError"]["type"]) == (404, "PortNotFound")
