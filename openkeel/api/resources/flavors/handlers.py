"""Handlers of ``/flavors``, ``/flavors/{id}/os-extra_specs``, ``/flavors/{id}/os-flavor-access``
and the flavor access actions. Registered by ``routes.py``; each turns the request into a
use case call and the result into the view of the negotiated microversion.
"""

from __future__ import annotations

from typing import Any

from openkeel.api.request import ApiRequest
from openkeel.api.resources.flavors import views
from openkeel.api.usecases.flavors import FlavorService, ListFlavors


def _service(req: ApiRequest) -> FlavorService:
    return FlavorService(req.services, req.context)


def _with_specs(req: ApiRequest, service: FlavorService) -> bool:
    return req.at_least("2.61") and service.may_see_specs()


def _list_query(req: ApiRequest) -> ListFlavors:
    return ListFlavors(
        is_public=req.query_value("is_public"),
        min_ram=req.query_value("minRam"),
        min_disk=req.query_value("minDisk"),
        name=req.query_value("name"),
        sort_key=req.query_value("sort_key"),
        sort_dir=req.query_value("sort_dir"),
        limit=req.query_value("limit"),
        marker=req.query_value("marker"),
    )


def list_flavors(req: ApiRequest) -> dict[str, Any]:
    """``GET /flavors``: id, name, links (and description from 2.55)."""
    service = _service(req)
    flavors = service.list_flavors(_list_query(req), with_specs=False)
    return views.collection(req, flavors, service.max_limit, None)


def list_flavors_detail(req: ApiRequest) -> dict[str, Any]:
    """``GET /flavors/detail``."""
    service = _service(req)
    with_specs = _with_specs(req, service)
    flavors = service.list_flavors(_list_query(req), with_specs=with_specs)
    return views.collection(req, flavors, service.max_limit, with_specs)


def show_flavor(req: ApiRequest) -> dict[str, Any]:
    """``GET /flavors/{id}``."""
    service = _service(req)
    flavor = service.show(req.params["id"])
    return views.one(req, flavor, _with_specs(req, service))


def create_flavor(req: ApiRequest) -> dict[str, Any]:
    """``POST /flavors`` (200, as Nova)."""
    service = _service(req)
    flavor = service.create(req.body["flavor"], with_description=req.at_least("2.55"))
    return views.one(req, flavor, _with_specs(req, service))


def update_flavor(req: ApiRequest) -> dict[str, Any]:
    """``PUT /flavors/{id}`` (2.55+): only the description changes."""
    service = _service(req)
    flavor = service.update(req.params["id"], req.body["flavor"]["description"])
    return views.one(req, flavor, _with_specs(req, service))


def delete_flavor(req: ApiRequest) -> None:
    """``DELETE /flavors/{id}`` (202, no body)."""
    _service(req).delete(req.params["id"])


def list_extra_specs(req: ApiRequest) -> dict[str, Any]:
    """``GET /flavors/{flavor_id}/os-extra_specs``."""
    return {"extra_specs": _service(req).extra_specs(req.params["flavor_id"])}


def create_extra_specs(req: ApiRequest) -> Any:
    """``POST /flavors/{flavor_id}/os-extra_specs``: echoes the request body."""
    specs = req.body["extra_specs"]
    _service(req).set_extra_specs(req.params["flavor_id"], specs, req.at_least("2.86"))
    return req.body


def show_extra_spec(req: ApiRequest) -> dict[str, Any]:
    """``GET /flavors/{flavor_id}/os-extra_specs/{id}``."""
    return _service(req).extra_spec(req.params["flavor_id"], req.params["id"])


def update_extra_spec(req: ApiRequest) -> Any:
    """``PUT /flavors/{flavor_id}/os-extra_specs/{id}``: echoes the request body."""
    _service(req).set_extra_specs(
        req.params["flavor_id"], req.body, req.at_least("2.86"), uri_key=req.params["id"]
    )
    return req.body


def delete_extra_spec(req: ApiRequest) -> None:
    """``DELETE /flavors/{flavor_id}/os-extra_specs/{id}`` (200, no body)."""
    _service(req).delete_extra_spec(req.params["flavor_id"], req.params["id"])


def list_flavor_access(req: ApiRequest) -> dict[str, Any]:
    """``GET /flavors/{flavor_id}/os-flavor-access``."""
    flavorid = req.params["flavor_id"]
    return views.access_list(flavorid, _service(req).access(flavorid))


def add_tenant_access(req: ApiRequest) -> dict[str, Any]:
    """``POST /flavors/{id}/action`` ``addTenantAccess``."""
    flavorid = req.params["id"]
    tenant = req.body["addTenantAccess"]["tenant"]
    projects = _service(req).add_access(flavorid, tenant, refuse_public=req.at_least("2.7"))
    return views.access_list(flavorid, projects)


def remove_tenant_access(req: ApiRequest) -> dict[str, Any]:
    """``POST /flavors/{id}/action`` ``removeTenantAccess``."""
    flavorid = req.params["id"]
    tenant = req.body["removeTenantAccess"]["tenant"]
    projects = _service(req).remove_access(flavorid, tenant)
    return views.access_list(flavorid, projects)
