"""Handlers of the ``os-networks`` proxy (index, show)."""

from __future__ import annotations

from typing import Any

from openkeel.api.request import ApiRequest
from openkeel.api.usecases import networks

POLICY = networks.POLICY


def list_networks(req: ApiRequest) -> dict[str, Any]:
    return {"networks": networks.list_networks(req.services, req.context)}


def show_network(req: ApiRequest) -> dict[str, Any]:
    return {"network": networks.show_network(req.services, req.context, req.params["id"])}
