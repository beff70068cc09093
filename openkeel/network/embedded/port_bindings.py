"""Neutron's multiple port bindings (``binding-extended``) over the embedded network's ports
(decision 0072): ``GET/POST /v2.0/ports/{id}/bindings``, ``GET/DELETE .../bindings/{host}``,
``PUT .../bindings/{host}/activate``, with Neutron's rules and words.

The port row holds the ACTIVE binding (what ``binding:host_id`` shows); the others are rows of
``openkeel_net_port_bindings``, INACTIVE. Activation swaps them: the host's binding becomes
the port's, the one that was active becomes an inactive, unbound row (as ML2 leaves it).
Only an administrator (Nova's service user) may use them, as Neutron's policy says; only
compute ports may have them. Called by the network API's port binding routes and the flat
adapter (a live migration on the all-in-one).
"""

from __future__ import annotations

from typing import Any

from openkeel.network.embedded.faults import BadRequest, Conflict, NotFound, PolicyNotAuthorized
from openkeel.network.embedded.service import Caller, NetworkService, Row, new_id

BOUND = "bridge"  # what the embedded network shows for a bound port (its ports view)


def _port(service: NetworkService, caller: Caller, port_id: str, action: str) -> Row:
    if not caller.is_admin:
        raise PolicyNotAuthorized(f"rule:{action}")
    row = service.store.get("ports", port_id)
    if row is None:
        raise NotFound(f"Port {port_id} could not be found.", "PortNotFound")
    return row


def _missing(port_id: str, host: str) -> NotFound:
    return NotFound(f"Binding for port {port_id} for host {host} could not be found.",
                    "PortBindingNotFound")  # fmt: skip


def _active(port: Row) -> dict[str, Any]:
    return {"host": port["binding_host_id"],
            "vif_type": BOUND if port["binding_host_id"] else "unbound",
            "vnic_type": port["binding_vnic_type"], "status": "ACTIVE",
            "profile": port["binding_profile"], "vif_details": {}}  # fmt: skip


def _inactive(row: Row) -> dict[str, Any]:
    return {"host": row["host"], "vif_type": row["vif_type"],
            "vnic_type": row["binding_vnic_type"], "status": "INACTIVE",
            "profile": row["binding_profile"], "vif_details": {}}  # fmt: skip


def _others(service: NetworkService, port_id: str, host: str | None = None) -> list[Row]:
    return service.store.list("port_bindings", port_id=port_id, host=host)


def list_bindings(service: NetworkService, caller: Caller, port_id: str) -> list[dict[str, Any]]:
    port = _port(service, caller, port_id, "get_port_binding")
    active = [_active(port)] if port["binding_host_id"] else []
    return active + [_inactive(row) for row in _others(service, port_id)]


def show_binding(service: NetworkService, caller: Caller, port_id: str, host: str) -> dict[str, Any]:  # fmt: skip
    for binding in list_bindings(service, caller, port_id):
        if binding["host"] == host:
            return binding
    raise _missing(port_id, host)


def create_binding(
    service: NetworkService, caller: Caller, port_id: str, ref: dict[str, Any]
) -> dict[str, Any]:
    """A binding on ``ref["host"]``: the port's own when it has none, else an inactive one."""
    port = _port(service, caller, port_id, "create_port_binding")
    if not str(port["device_owner"]).startswith("compute:"):
        raise BadRequest(f"Bad port request: Invalid port {port_id}. Operation only valid on "
                         "compute and shared filesystem ports.")  # fmt: skip
    host = str(ref["host"])
    if host == port["binding_host_id"] or _others(service, port_id, host):
        raise Conflict(f"Binding for port {port_id} on host {host} already exists.",
                       "PortBindingAlreadyExists")  # fmt: skip
    vnic = str(ref.get("vnic_type") or "normal")
    profile = ref.get("profile") or {}
    if not port["binding_host_id"]:
        updated = service.store.update("ports", port_id, {
            "binding_host_id": host, "binding_vnic_type": vnic, "binding_profile": profile})  # fmt: skip
        assert updated is not None
        return _active(updated)
    row = service.store.insert("port_bindings", {
        "id": new_id(), "port_id": port_id, "host": host, "vif_type": BOUND,
        "binding_vnic_type": vnic, "binding_profile": profile})  # fmt: skip
    return _inactive(row)


def activate_binding(service: NetworkService, caller: Caller, port_id: str, host: str) -> dict[str, Any]:  # fmt: skip
    """The host's inactive binding becomes the port's; the active one becomes inactive."""
    port = _port(service, caller, port_id, "activate")
    if host == port["binding_host_id"]:
        raise Conflict(f"Binding for port {port_id} on host {host} is already active.",
                       "PortBindingAlreadyActive")  # fmt: skip
    found = _others(service, port_id, host)
    if not found:
        raise _missing(port_id, host)
    (row,) = found
    service.store.delete("port_bindings", row["id"])
    if port["binding_host_id"]:
        service.store.insert("port_bindings", {
            "id": new_id(), "port_id": port_id, "host": port["binding_host_id"],
            "vif_type": "unbound", "binding_vnic_type": port["binding_vnic_type"],
            "binding_profile": port["binding_profile"]})  # fmt: skip
    updated = service.store.update("ports", port_id, {
        "binding_host_id": host, "binding_vnic_type": row["binding_vnic_type"],
        "binding_profile": row["binding_profile"]})  # fmt: skip
    if updated is None:
        raise NotFound(f"Port {port_id} could not be found.", "PortNotFound")
    return _active(updated)


def delete_binding(service: NetworkService, caller: Caller, port_id: str, host: str) -> None:
    """The host's binding goes; the active one too (the port is then unbound), as Neutron."""
    port = _port(service, caller, port_id, "delete_port_binding")
    found = _others(service, port_id, host)
    if found:
        service.store.delete("port_bindings", found[0]["id"])
    elif host and host == port["binding_host_id"]:
        service.store.update("ports", port_id, {"binding_host_id": "", "binding_profile": {}})
    else:
        raise _missing(port_id, host)
