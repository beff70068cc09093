"""Server IPs use cases: the server's addresses by network label, from its network info cache
(Nova's network model: VIFs with ``network.label``, ``network.subnets[].ips[]`` and each fixed
IP's ``floating_ips``). Called by the /servers/{server_id}/ips handlers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from openkeel.api.context import RequestContext
from openkeel.api.services import ApiServices
from openkeel.api.usecases.servers.lookup import find_server
from openkeel.domain.errors import NotFound

POLICY = "os_compute_api:ips:%s"


@dataclass
class NetworkAddresses:
    """The fixed and floating IPs of one network label (each IP dict has ``address``,
    ``version``, ``type`` and the VIF's ``mac_address``)."""

    fixed: list[dict[str, Any]] = field(default_factory=list)
    floating: list[dict[str, Any]] = field(default_factory=list)

    def all(self) -> list[dict[str, Any]]:
        """Fixed IPs first, then floating ones (Nova's order)."""
        return [*self.fixed, *self.floating]


def _with_mac(ip: Mapping[str, Any], mac: Any) -> dict[str, Any]:
    return {**ip, "mac_address": mac}


def networks_of(network_info: Iterable[Mapping[str, Any]]) -> dict[str, NetworkAddresses]:
    """Addresses by network label, labels in VIF order."""
    networks: dict[str, NetworkAddresses] = {}
    for vif in network_info:
        network = vif.get("network") or {}
        fixed = [ip for subnet in network.get("subnets") or [] for ip in subnet.get("ips") or []]
        floating = [fip for ip in fixed for fip in ip.get("floating_ips") or []]
        entry = networks.setdefault(str(network.get("label")), NetworkAddresses())
        mac = vif.get("address")
        entry.fixed.extend(_with_mac(ip, mac) for ip in fixed)
        entry.floating.extend(_with_mac(ip, mac) for ip in floating)
    return networks


class ServerIpsService:
    """The addresses of the servers one caller can see."""

    def __init__(self, services: ApiServices, context: RequestContext) -> None:
        self._services = services
        self._context = context

    def _networks(self, server_id: str, rule: str) -> dict[str, NetworkAddresses]:
        inst = find_server(self._services, self._context, server_id).instance
        self._context.can(POLICY % rule, {"project_id": inst.project_id})
        return networks_of(inst.network_info)

    def list(self, server_id: str) -> dict[str, NetworkAddresses]:
        """GET .../ips."""
        return self._networks(server_id, "index")

    def show(self, server_id: str, label: str) -> NetworkAddresses:
        """GET .../ips/{label} (404 when the server has no address on that network)."""
        networks = self._networks(server_id, "show")
        if label not in networks:
            raise NotFound("Instance is not a member of specified network")
        return networks[label]
