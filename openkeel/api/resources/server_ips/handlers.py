"""Server IPs handlers: call the server IPs use case, render the view. Registered by
``routes.py``."""

from __future__ import annotations

from typing import Any

from openkeel.api.request import ApiRequest
from openkeel.api.resources.server_ips import views
from openkeel.api.usecases.server_ips import ServerIpsService


def list_server_ips(req: ApiRequest) -> dict[str, Any]:
    """GET /servers/{server_id}/ips."""
    return views.index(ServerIpsService(req.services, req.context).list(req.params["server_id"]))


def show_server_ips(req: ApiRequest) -> dict[str, Any]:
    """GET /servers/{server_id}/ips/{id} (``id`` is the network label)."""
    label = req.params["id"]
    network = ServerIpsService(req.services, req.context).show(req.params["server_id"], label)
    return views.show(label, network)
