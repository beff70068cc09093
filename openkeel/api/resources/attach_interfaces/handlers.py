"""Handlers of ``/servers/{server_id}/os-interface``: list, show, attach (the port's view, as
Nova answers), detach (202)."""

from __future__ import annotations

from typing import Any

from openkeel.api.request import ApiRequest
from openkeel.api.usecases.interfaces import POLICY, ServerInterfaces

__all__ = ["POLICY", "attach", "detach", "list_interfaces", "show_interface"]


def _view(req: ApiRequest, port: dict[str, Any]) -> dict[str, Any]:
    out = {
        "net_id": port["network_id"],
        "port_id": port["id"],
        "mac_addr": port["mac_address"],
        "port_state": port["status"],
        "fixed_ips": port["fixed_ips"],
    }
    if req.at_least("2.70"):
        out["tag"] = port["tag"]
    return out


def list_interfaces(req: ApiRequest) -> dict[str, Any]:
    ports = ServerInterfaces(req.services, req.context).list(req.params["server_id"])
    return {"interfaceAttachments": [_view(req, p) for p in ports]}


def show_interface(req: ApiRequest) -> dict[str, Any]:
    port = ServerInterfaces(req.services, req.context).show(
        req.params["server_id"], req.params["id"]
    )
    return {"interfaceAttachment": _view(req, port)}


def attach(req: ApiRequest) -> dict[str, Any]:
    wanted: dict[str, Any] = (req.body or {}).get("interfaceAttachment") or {}
    fixed = wanted.get("fixed_ips") or [{}]
    port = ServerInterfaces(req.services, req.context).attach(
        req.params["server_id"], wanted.get("net_id"), wanted.get("port_id"),
        fixed[0].get("ip_address"), wanted.get("tag"),
    )  # fmt: skip
    return {"interfaceAttachment": _view(req, port)}


def detach(req: ApiRequest) -> None:
    ServerInterfaces(req.services, req.context).detach(req.params["server_id"], req.params["id"])
