"""Version discovery, and the read-only parts of the identity API: the one domain, the
region, the services and endpoints of the catalog."""

from __future__ import annotations

from typing import Any

from openkeel.identity_api import views
from openkeel.identity_api.catalog import REGION, endpoint_views, service_view
from openkeel.identity_api.faults import NotFound, NotImplementedFault, forbidden
from openkeel.identity_api.request import IdentityRequest, Reply, collection
from openkeel.identity_api.routing import Endpoint, RouteTable
from openkeel.identity_api.service import DEFAULT_DOMAIN_ID, DEFAULT_DOMAIN_NAME

ONLY_DEFAULT = "Domains other than 'default' are not offered by this identity service."


def _version(req: IdentityRequest) -> dict[str, Any]:
    return {
        "id": "v3.14",
        "status": "stable",
        "updated": "2020-04-07T00:00:00Z",
        "links": [{"rel": "self", "href": f"{req.base}/v3/"}],
        "media-types": [
            {"base": "application/json", "type": "application/vnd.openstack.identity-v3+json"}
        ],
    }


def versions(req: IdentityRequest) -> Reply:
    return Reply({"versions": {"values": [_version(req)]}}, 300)


def version(req: IdentityRequest) -> Reply:
    return Reply({"version": _version(req)})


def list_domains(req: IdentityRequest) -> Reply:
    name = req.value("name")
    wanted = name is None or name in (DEFAULT_DOMAIN_NAME, DEFAULT_DOMAIN_ID)
    if req.flag("enabled") is False:
        wanted = False
    return collection(req, "domains", [views.domain(req.base)] if wanted else [])


def show_domain(req: IdentityRequest) -> Reply:
    if req.params["domain_id"] != DEFAULT_DOMAIN_ID:
        raise NotFound(f"Could not find domain: {req.params['domain_id']}.")
    return Reply({"domain": views.domain(req.base)})


def unsupported_domain(req: IdentityRequest) -> Reply:
    if not req.caller.is_admin:
        raise forbidden("create_domain" if req.method == "POST" else "update_domain")
    raise NotImplementedFault(ONLY_DEFAULT)


def regions(req: IdentityRequest) -> Reply:
    region = {"id": REGION, "description": "", "parent_region_id": None,
              "links": {"self": f"{req.base}/v3/regions/{REGION}"}}  # fmt: skip
    return collection(req, "regions", [region])


def services(req: IdentityRequest) -> Reply:
    kind = req.value("type")
    found = [e for e in req.service.catalog if kind is None or e.type == kind]
    return collection(req, "services", [service_view(e, req.base) for e in found])


def endpoints(req: IdentityRequest) -> Reply:
    service_id, interface = req.value("service_id"), req.value("interface")
    items = [
        item
        for entry in req.service.catalog
        for item in endpoint_views(entry, req.root, req.base)
        if (service_id is None or item["service_id"] == service_id)
        and (interface is None or item["interface"] == interface)
    ]
    return collection(req, "endpoints", items)


def register(table: RouteTable) -> None:
    table.add("GET", "/", Endpoint(versions, anonymous=True))
    table.add("GET", "/v3", Endpoint(version, anonymous=True))
    table.add("GET", "/v3/domains", Endpoint(list_domains))
    table.add("POST", "/v3/domains", Endpoint(unsupported_domain))
    table.add("GET", "/v3/domains/{domain_id}", Endpoint(show_domain))
    table.add("PATCH", "/v3/domains/{domain_id}", Endpoint(unsupported_domain))
    table.add("DELETE", "/v3/domains/{domain_id}", Endpoint(unsupported_domain))
    table.add("GET", "/v3/regions", Endpoint(regions))
    table.add("GET", "/v3/services", Endpoint(services))
    table.add("GET", "/v3/endpoints", Endpoint(endpoints))
