"""Response bodies of the server IPs API: ``{"version", "addr"}`` per address (the same at
every microversion)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from openkeel.api.usecases.server_ips import NetworkAddresses


def _addresses(network: NetworkAddresses) -> list[dict[str, Any]]:
    return [{"version": ip.get("version"), "addr": ip.get("address")} for ip in network.all()]


def index(networks: Mapping[str, NetworkAddresses]) -> dict[str, Any]:
    """``{"addresses": {label: [...]}}``."""
    return {"addresses": {label: _addresses(n) for label, n in networks.items()}}


def show(label: str, network: NetworkAddresses) -> dict[str, Any]:
    """``{label: [...]}``."""
    return {label: _addresses(network)}
