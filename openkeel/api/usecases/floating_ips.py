"""The ``os-floating-ips`` and ``os-floating-ip-pools`` proxies (2.1-2.35) and the
``addFloatingIp`` / ``removeFloatingIp`` server actions (2.1-2.43): the project's floating IPs
through the network adapter, answered as Nova 34.0.0 answers them over Neutron.

A server whose floating IP changed is told so as Neutron tells Nova (a ``network-changed``
external event to its host, which reads its network info again); the embedded adapter's own
service sends none. Called by the floating_ips and floating_ip_pools resources.
"""

from __future__ import annotations

import ipaddress
import logging
from typing import Any

from openkeel.api.context import RequestContext
from openkeel.api.services import ApiServices
from openkeel.api.usecases.external_events import create_events
from openkeel.api.usecases.servers.lookup import find_server
from openkeel.domain.errors import Conflict, Invalid, NotFound
from openkeel.network import errors as net_errors
from openkeel.network.adapter import Requester
from openkeel.network.factory import get_network_adapter

LOG = logging.getLogger(__name__)
POLICY = "os_compute_api:os-floating-ips:%s"
POOLS_POLICY = "os_compute_api:os-floating-ip-pools"


def report_network_changed(
    services: ApiServices, context: RequestContext, server_uuids: list[str | None]
) -> None:
    """What Neutron's Nova notifier does after a floating IP moved: a ``network-changed`` event
    for each server concerned (never fails the change it follows)."""
    bodies = [
        {"server_uuid": u, "name": "network-changed"} for u in dict.fromkeys(server_uuids) if u
    ]
    if not bodies:
        return
    service = RequestContext(user_id="network", project_id=None, roles=("admin", "service"),
                             enforcer=context.enforcer)  # fmt: skip
    try:
        create_events(services, service, bodies)
    except Exception:
        LOG.exception("Reporting network-changed for %s failed", bodies)


def _view(fip: dict[str, Any]) -> dict[str, Any]:
    return {"fixed_ip": fip["fixed_ip_address"], "id": fip["id"], "instance_id": fip["instance_id"],
            "ip": fip["floating_ip_address"], "pool": fip["pool"]}  # fmt: skip


class FloatingIps:
    """Floating IPs as one caller sees them."""

    def __init__(self, services: ApiServices, context: RequestContext) -> None:
        self._services = services
        self._context = context
        self._network = get_network_adapter(services.conf, services.api_db)
        self._caller = Requester(str(context.project_id), context.is_admin)

    def _can(self, rule: str) -> None:
        self._context.can(POLICY % rule, {"project_id": self._context.project_id})

    def pools(self) -> list[dict[str, Any]]:
        self._context.can(POOLS_POLICY, {})
        return [
            {"name": p["name"] or p["id"]}
            for p in self._network.list_floating_ip_pools(self._caller)
        ]

    def list(self) -> list[dict[str, Any]]:
        self._can("list")
        return [_view(f) for f in self._network.list_floating_ips(self._caller)]

    def _get(self, floating_ip_id: str) -> dict[str, Any]:
        try:
            return self._network.get_floating_ip(self._caller, floating_ip_id)
        except net_errors.FloatingIpNotFound as exc:
            raise NotFound(f"Floating IP not found for ID {floating_ip_id}") from exc

    def show(self, floating_ip_id: str) -> dict[str, Any]:
        self._can("show")
        return _view(self._get(floating_ip_id))

    def create(self, pool: str | None) -> dict[str, Any]:
        self._can("create")
        where = f" in pool {pool}" if pool else ""
        try:
            return _view(self._network.allocate_floating_ip(self._caller, pool))
        except net_errors.NoMoreFloatingIps as exc:
            words = (
                f"No more floating IPs in pool {pool}."
                if pool
                else "No more floating IPs available."
            )
            raise NotFound(words) from exc
        except net_errors.FloatingIpLimitExceeded as exc:
            raise net_errors.FloatingIpLimitExceeded(f"IP allocation over quota{where}.") from exc

    def _holder(self, address: str) -> str | None:
        """The server the floating IP points at (Nova's get_instance_by_floating_ip_addr)."""
        fip = self._network.get_floating_ip_by_address(self._caller, address)
        holder = fip["instance_id"] or None
        if holder is not None:
            find_server(self._services, self._context, holder)
        return holder

    def delete(self, floating_ip_id: str) -> None:
        self._can("delete")
        fip = self._get(floating_ip_id)
        holder = self._holder(fip["floating_ip_address"])
        self._network.release_floating_ip(self._caller, fip["floating_ip_address"])
        report_network_changed(self._services, self._context, [holder])

    def add(self, server_id: str, address: str, fixed_address: str | None) -> None:
        """Nova's addFloatingIp: the fixed address from the server's cached network info."""
        inst = find_server(self._services, self._context, server_id).instance
        self._context.can(POLICY % "add", {"project_id": inst.project_id})
        if not inst.network_info:
            raise Invalid("Instance network is not ready yet")
        fixed = [ip["address"] for vif in inst.network_info
                 for subnet in vif["network"]["subnets"] for ip in subnet["ips"]]  # fmt: skip
        if not fixed:
            raise Invalid("No fixed IPs associated to instance")
        if fixed_address is not None and fixed_address not in fixed:
            raise Invalid("Specified fixed address not assigned to instance")
        if not fixed_address:
            fixed_address = next((a for a in fixed if ipaddress.ip_address(a).version == 4), None)
            if fixed_address is None:
                raise Invalid(f"Unable to associate floating IP {address} to any fixed IPs for "
                              f"instance {server_id}. Instance has no fixed IPv4 addresses to "
                              "associate.")  # fmt: skip
        try:
            before = self._network.get_floating_ip_by_address(self._caller, address)
            self._network.associate_floating_ip(self._caller, inst.uuid, address, fixed_address)
        except net_errors.FloatingIpNotFoundForAddress as exc:
            raise NotFound("floating IP not found") from exc
        except net_errors.FloatingIpAssociateFailed:
            raise
        except Exception as exc:
            raise Invalid(f"Unable to associate floating IP {address} to fixed IP "
                          f"{fixed_address} for instance {server_id}. Error: {exc}") from exc  # fmt: skip
        report_network_changed(self._services, self._context, [inst.uuid, before["instance_id"]])

    def remove(self, server_id: str, address: str) -> None:
        """Nova's removeFloatingIp: only from the server it points at (409 otherwise)."""
        try:
            holder = self._holder(address)
        except net_errors.FloatingIpNotFoundForAddress as exc:
            raise NotFound(exc.message) from exc
        target: dict[str, Any] = {}
        if holder is not None:
            target = {
                "project_id": find_server(self._services, self._context, holder).instance.project_id
            }
        self._context.can(POLICY % "remove", target)
        fip = self._network.get_floating_ip_by_address(self._caller, address)
        if holder is None or not fip["port_id"] or holder != server_id:
            raise Conflict(f"Floating IP {address} is not associated with instance {server_id}.")
        self._network.disassociate_floating_ip(self._caller, address)
        report_network_changed(self._services, self._context, [holder])
