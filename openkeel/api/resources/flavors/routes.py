"""Routes of the flavors resource family (discovered by ``openkeel.api.factory``)."""

from __future__ import annotations

from openkeel.api.resources.flavors import handlers as h
from openkeel.api.resources.flavors import schemas as s
from openkeel.api.routing import RouteTable, endpoint

_FLAVOR = "/flavors/{id}"
_SPECS = "/flavors/{flavor_id}/os-extra_specs"
_SPEC = "/flavors/{flavor_id}/os-extra_specs/{id}"
_MANAGE = "os_compute_api:os-flavor-manage:"
_EXTRA = "os_compute_api:os-flavor-extra-specs:"
_ACCESS = "os_compute_api:os-flavor-access"


def register(table: RouteTable) -> None:
    """Add the routes to ``table``."""
    table.add("GET", "/flavors", endpoint(h.list_flavors, query=s.LIST_QUERY))
    table.add(
        "GET",
        "/flavors/detail",
        endpoint(h.list_flavors_detail, query=s.LIST_QUERY, policy=f"{_EXTRA}index"),
    )
    table.add(
        "POST",
        "/flavors",
        endpoint(h.create_flavor, body=s.CREATE_BODY, policy=f"{_MANAGE}create"),
    )
    table.add(
        "GET",
        _FLAVOR,
        endpoint(h.show_flavor, query=s.SHOW_QUERY, policy=f"{_EXTRA}index", bounded=True),
    )
    table.add(
        "PUT",
        _FLAVOR,
        endpoint(h.update_flavor, since="2.55", body=s.UPDATE_BODY, policy=f"{_MANAGE}update"),
    )
    table.add("DELETE", _FLAVOR, endpoint(h.delete_flavor, status=202, policy=f"{_MANAGE}delete"))
    table.add_action(
        f"{_FLAVOR}/action",
        "addTenantAccess",
        endpoint(
            h.add_tenant_access, body=s.ADD_TENANT_BODY, policy=f"{_ACCESS}:add_tenant_access"
        ),
    )
    table.add_action(
        f"{_FLAVOR}/action",
        "removeTenantAccess",
        endpoint(
            h.remove_tenant_access,
            body=s.REMOVE_TENANT_BODY,
            policy=f"{_ACCESS}:remove_tenant_access",
        ),
    )
    _register_extra_specs(table)
    table.add(
        "GET",
        "/flavors/{flavor_id}/os-flavor-access",
        endpoint(h.list_flavor_access, query=s.SHOW_QUERY, policy=_ACCESS),
    )


def _register_extra_specs(table: RouteTable) -> None:
    table.add(
        "GET", _SPECS, endpoint(h.list_extra_specs, query=s.SHOW_QUERY, policy=f"{_EXTRA}index")
    )
    table.add(
        "POST",
        _SPECS,
        endpoint(h.create_extra_specs, body=s.SPECS_CREATE_BODY, policy=f"{_EXTRA}create"),
    )
    table.add("GET", _SPEC, endpoint(h.show_extra_spec, query=s.SHOW_QUERY, policy=f"{_EXTRA}show"))
    table.add(
        "PUT",
        _SPEC,
        endpoint(h.update_extra_spec, body=s.SPEC_UPDATE_BODY, policy=f"{_EXTRA}update"),
    )
    table.add("DELETE", _SPEC, endpoint(h.delete_extra_spec, policy=f"{_EXTRA}delete"))
