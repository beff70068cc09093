"""Routes of the APIs Nova removed: one table, registered as 410 Gone at every microversion.

Called by :func:`openkeel.api.factory.build_routes`. Nova keeps these routes so that old
clients get ``410 computeFault "This resource is no longer available. No forwarding address is
given."`` instead of a 404. The 410 is answered after authentication (401), microversion
negotiation (400 / 406), content type (415), body parsing (400) and the URL project check (400),
and before any policy check: the removed controllers check none. Body actions are registered by
key only; the other actions of the same ``…/action`` route belong to their own resources (the
route table merges actions by key). ``os-getRDPConsole`` is flagged removed but keeps its
2.1-2.5 window and answers 400 there (see handlers.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from openkeel.api.resources.removed.handlers import reject_rdp_console
from openkeel.api.routing import GONE, RouteTable, endpoint


@dataclass(frozen=True)
class Removed:
    """A removed API: ``method template`` or, with ``action``, a body key of ``POST template``."""

    method: str
    template: str
    release: str  # the Nova release that removed it (its ``@wsgi.removed`` version)
    action: str | None = None


REMOVED: tuple[Removed, ...] = (
    # os-agents (XenAPI guest agent builds): removed in 22.0.0 Victoria with the XenAPI driver.
    Removed("GET", "/os-agents", "22.0.0"),
    Removed("POST", "/os-agents", "22.0.0"),
    Removed("PUT", "/os-agents/{id}", "22.0.0"),
    Removed("DELETE", "/os-agents/{id}", "22.0.0"),
    # os-cells (cells v1 only): removed in 20.0.0 Train.
    Removed("POST", "/os-cells", "20.0.0"),
    Removed("GET", "/os-cells", "20.0.0"),
    Removed("GET", "/os-cells/capacities", "20.0.0"),
    Removed("GET", "/os-cells/detail", "20.0.0"),
    Removed("GET", "/os-cells/info", "20.0.0"),
    Removed("POST", "/os-cells/sync_instances", "20.0.0"),
    Removed("GET", "/os-cells/{id}", "20.0.0"),
    Removed("PUT", "/os-cells/{id}", "20.0.0"),
    Removed("DELETE", "/os-cells/{id}", "20.0.0"),
    Removed("GET", "/os-cells/{id}/capacities", "20.0.0"),
    # os-certificates (EC2 x509 certificates): removed in 16.0.0 Pike.
    Removed("POST", "/os-certificates", "16.0.0"),
    Removed("GET", "/os-certificates/{id}", "16.0.0"),
    # os-cloudpipe (nova-network VPN instances): removed in 16.0.0 Pike.
    Removed("GET", "/os-cloudpipe", "16.0.0"),
    Removed("POST", "/os-cloudpipe", "16.0.0"),
    Removed("PUT", "/os-cloudpipe/{id}", "16.0.0"),
    # os-fixed-ips (nova-network): removed in 18.0.0 Rocky, with its reserve/unreserve actions.
    Removed("GET", "/os-fixed-ips/{id}", "18.0.0"),
    Removed("POST", "/os-fixed-ips/{id}/action", "18.0.0", action="reserve"),
    Removed("POST", "/os-fixed-ips/{id}/action", "18.0.0", action="unreserve"),
    # os-floating-ip-dns (nova-network DNS domains and entries): removed in 18.0.0 Rocky.
    Removed("GET", "/os-floating-ip-dns", "18.0.0"),
    Removed("PUT", "/os-floating-ip-dns/{id}", "18.0.0"),
    Removed("DELETE", "/os-floating-ip-dns/{id}", "18.0.0"),
    Removed("GET", "/os-floating-ip-dns/{domain_id}/entries/{id}", "18.0.0"),
    Removed("PUT", "/os-floating-ip-dns/{domain_id}/entries/{id}", "18.0.0"),
    Removed("DELETE", "/os-floating-ip-dns/{domain_id}/entries/{id}", "18.0.0"),
    # os-floating-ips-bulk (nova-network): removed in 18.0.0 Rocky.
    Removed("GET", "/os-floating-ips-bulk", "18.0.0"),
    Removed("POST", "/os-floating-ips-bulk", "18.0.0"),
    Removed("GET", "/os-floating-ips-bulk/{id}", "18.0.0"),
    Removed("PUT", "/os-floating-ips-bulk/{id}", "18.0.0"),
    # os-fping (nova-network): removed in 18.0.0 Rocky.
    Removed("GET", "/os-fping", "18.0.0"),
    Removed("GET", "/os-fping/{id}", "18.0.0"),
    # os-networks associate actions (os-networks-associate): removed in 18.0.0 Rocky.
    Removed("POST", "/os-networks/{id}/action", "18.0.0", action="associate_host"),
    Removed("POST", "/os-networks/{id}/action", "18.0.0", action="disassociate_host"),
    Removed("POST", "/os-networks/{id}/action", "18.0.0", action="disassociate_project"),
    # os-networks management (nova-network): removed in 21.0.0 Ussuri; list/show stay (<=2.35).
    Removed("POST", "/os-networks", "21.0.0"),
    Removed("POST", "/os-networks/add", "21.0.0"),
    Removed("DELETE", "/os-networks/{id}", "21.0.0"),
    Removed("POST", "/os-networks/{id}/action", "21.0.0", action="disassociate"),
    # os-security-group-default-rules (nova-network): removed in 21.0.0 Ussuri.
    Removed("GET", "/os-security-group-default-rules", "21.0.0"),
    Removed("POST", "/os-security-group-default-rules", "21.0.0"),
    Removed("GET", "/os-security-group-default-rules/{id}", "21.0.0"),
    Removed("DELETE", "/os-security-group-default-rules/{id}", "21.0.0"),
    # os-tenant-networks create/delete (nova-network): removed in 21.0.0 Ussuri.
    Removed("POST", "/os-tenant-networks", "21.0.0"),
    Removed("DELETE", "/os-tenant-networks/{id}", "21.0.0"),
    # server consoles (the nova-console service): removed in 21.0.0 Ussuri.
    Removed("GET", "/servers/{server_id}/consoles", "21.0.0"),
    Removed("POST", "/servers/{server_id}/consoles", "21.0.0"),
    Removed("GET", "/servers/{server_id}/consoles/{id}", "21.0.0"),
    Removed("DELETE", "/servers/{server_id}/consoles/{id}", "21.0.0"),
    # os-virtual-interfaces (nova-network): removed in 18.0.0 Rocky.
    Removed("GET", "/servers/{server_id}/os-virtual-interfaces", "18.0.0"),
    # resetNetwork server action (XenAPI only): removed in 23.0.0 Wallaby.
    Removed("POST", "/servers/{id}/action", "23.0.0", action="resetNetwork"),
)

# os-getRDPConsole (Hyper-V only): flagged removed in 29.0.0 Caracal, yet still windowed
# 2.1-2.5 where it answers 400; 404 above, like any method outside its window.
RDP_CONSOLE = endpoint(reject_rdp_console, since="2.1", until="2.5")


def register(table: RouteTable) -> None:
    """Add every removed API (410) and os-getRDPConsole to ``table``."""
    for api in REMOVED:
        if api.action is None:
            table.gone(api.method, api.template)
        else:
            table.add_action(api.template, api.action, GONE)
    table.add_action("/servers/{id}/action", "os-getRDPConsole", RDP_CONSOLE)
