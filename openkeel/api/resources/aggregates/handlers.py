"""os-aggregates handlers: read the request, call the aggregate use case, render the view.
Registered by ``routes.py``."""

from __future__ import annotations

from typing import Any

from openkeel.api.request import ApiRequest
from openkeel.api.resources.aggregates import views
from openkeel.api.usecases.aggregates import AggregateService


def _service(req: ApiRequest) -> AggregateService:
    return AggregateService(req.services, req.context)


def _uuid(req: ApiRequest) -> bool:
    return req.at_least("2.41")


def list_aggregates(req: ApiRequest) -> dict[str, Any]:
    """GET /os-aggregates."""
    return views.aggregate_list(_service(req).list_all(), _uuid(req))


def create_aggregate(req: ApiRequest) -> dict[str, Any]:
    """POST /os-aggregates (names and zones stripped, as Nova does for the legacy v2 API)."""
    params = req.body["aggregate"]
    zone = params.get("availability_zone")
    created = _service(req).create(params["name"].strip(), zone.strip() if zone else zone)
    return views.aggregate_created(created, _uuid(req))


def show_aggregate(req: ApiRequest) -> dict[str, Any]:
    """GET /os-aggregates/{id}."""
    return views.aggregate_detail(_service(req).get(req.params["id"]), _uuid(req))


def update_aggregate(req: ApiRequest) -> dict[str, Any]:
    """PUT /os-aggregates/{id}: name and/or availability zone."""
    params = req.body["aggregate"]
    name = params["name"].strip() if "name" in params else None
    updated = _service(req).update(
        req.params["id"], name, "availability_zone" in params, params.get("availability_zone")
    )
    return views.aggregate_detail(updated, _uuid(req))


def delete_aggregate(req: ApiRequest) -> None:
    """DELETE /os-aggregates/{id}."""
    _service(req).delete(req.params["id"])


def add_host(req: ApiRequest) -> dict[str, Any]:
    """POST /os-aggregates/{id}/action {"add_host": ...}."""
    added = _service(req).add_host(req.params["id"], req.body["add_host"]["host"])
    return views.aggregate_detail(added, _uuid(req))


def remove_host(req: ApiRequest) -> dict[str, Any]:
    """POST /os-aggregates/{id}/action {"remove_host": ...}."""
    removed = _service(req).remove_host(req.params["id"], req.body["remove_host"]["host"])
    return views.aggregate_detail(removed, _uuid(req))


def set_metadata(req: ApiRequest) -> dict[str, Any]:
    """POST /os-aggregates/{id}/action {"set_metadata": ...}."""
    changed = _service(req).set_metadata(req.params["id"], req.body["set_metadata"]["metadata"])
    return views.aggregate_detail(changed, _uuid(req))


def cache_images(req: ApiRequest) -> None:
    """POST /os-aggregates/{id}/images (2.81)."""
    _service(req).cache_images(req.params["id"], [i["id"] for i in req.body["cache"]])
