"""The ``os-networks`` proxy (2.1-2.35, read only since Nova 21): the networks the caller's
project may see, through the network adapter, in Nova's form (``id`` and ``label``; every
nova-network field None; the admin-only ones for admins only)."""

from __future__ import annotations

from typing import Any

from openkeel.api.context import RequestContext
from openkeel.api.services import ApiServices
from openkeel.domain.errors import NotFound
from openkeel.network import errors as net_errors
from openkeel.network.factory import get_network_adapter

POLICY = "os_compute_api:os-networks:%s"
FIELDS = ("id", "cidr", "netmask", "gateway", "broadcast", "dns1", "dns2", "cidr_v6",
          "gateway_v6", "label", "netmask_v6")  # fmt: skip
ADMIN_FIELDS = (
    "created_at", "updated_at", "deleted_at", "deleted", "injected", "bridge", "vlan",
    "vpn_public_address", "vpn_public_port", "vpn_private_address", "dhcp_start", "project_id",
    "host", "bridge_interface", "multi_host", "priority", "rxtx_base", "mtu", "dhcp_server",
    "enable_dhcp", "share_address",
)  # fmt: skip


def _view(context: RequestContext, network: dict[str, Any]) -> dict[str, Any]:
    fields = FIELDS + ADMIN_FIELDS if context.is_admin else FIELDS
    out: dict[str, Any] = dict.fromkeys(fields)
    out["id"], out["label"] = network["id"], network["name"]
    return out


def _scope(context: RequestContext) -> str | None:
    return None if context.is_admin else str(context.project_id)


def list_networks(services: ApiServices, context: RequestContext) -> list[dict[str, Any]]:
    context.can(POLICY % "list", {"project_id": context.project_id})
    adapter = get_network_adapter(services.conf, services.api_db)
    return [_view(context, n) for n in adapter.list_networks(_scope(context))]


def show_network(services: ApiServices, context: RequestContext, network_id: str) -> dict[str, Any]:
    context.can(POLICY % "show", {"project_id": context.project_id})
    adapter = get_network_adapter(services.conf, services.api_db)
    try:
        return _view(context, adapter.get_network(_scope(context), network_id))
    except net_errors.NetworkNotFound as exc:
        raise NotFound("Network not found") from exc


# --- os-tenant-networks (2.1-2.35): the same networks in nova-network's tenant form ---------
TENANT_POLICY = "os_compute_api:os-tenant-networks:%s"


def _tenant_view(network: dict[str, Any]) -> dict[str, Any]:
    # Nova writes the cidr it no longer knows as the string "None".
    return {"id": network["id"], "cidr": "None", "label": network["name"]}


def list_tenant_networks(services: ApiServices, context: RequestContext) -> list[dict[str, Any]]:
    context.can(TENANT_POLICY % "list", {"project_id": context.project_id})
    adapter = get_network_adapter(services.conf, services.api_db)
    return [_tenant_view(n) for n in adapter.list_networks(_scope(context))]


def show_tenant_network(
    services: ApiServices, context: RequestContext, network_id: str
) -> dict[str, Any]:
    context.can(TENANT_POLICY % "show", {"project_id": context.project_id})
    adapter = get_network_adapter(services.conf, services.api_db)
    try:
        return _tenant_view(adapter.get_network(_scope(context), network_id))
    except net_errors.NetworkNotFound as exc:
        raise NotFound("Network not found") from exc
