"""Handlers of the ``os-floating-ips`` proxy and the floating IP server actions."""

from __future__ import annotations

from typing import Any

from openkeel.api.request import ApiRequest
from openkeel.api.usecases.floating_ips import POLICY, FloatingIps

__all__ = ["POLICY"]


def _ips(req: ApiRequest) -> FloatingIps:
    return FloatingIps(req.services, req.context)


def list_floating_ips(req: ApiRequest) -> dict[str, Any]:
    return {"floating_ips": _ips(req).list()}


def show_floating_ip(req: ApiRequest) -> dict[str, Any]:
    return {"floating_ip": _ips(req).show(req.params["id"])}


def create_floating_ip(req: ApiRequest) -> dict[str, Any]:
    pool = (req.body or {}).get("pool")
    return {"floating_ip": _ips(req).create(pool)}


def delete_floating_ip(req: ApiRequest) -> None:
    _ips(req).delete(req.params["id"])


def add_floating_ip(req: ApiRequest) -> None:
    wanted = req.body["addFloatingIp"]
    _ips(req).add(req.params["id"], wanted["address"], wanted.get("fixed_address"))


def remove_floating_ip(req: ApiRequest) -> None:
    _ips(req).remove(req.params["id"], req.body["removeFloatingIp"]["address"])
