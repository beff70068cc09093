"""Handlers of ``/os-availability-zone``."""

from __future__ import annotations

from typing import Any

from openkeel.api.request import ApiRequest
from openkeel.api.resources.availability_zones import views
from openkeel.api.usecases.availability_zones import AvailabilityZoneService

POLICY = "os_compute_api:os-availability-zone:%s"


def list_availability_zones(req: ApiRequest) -> dict[str, Any]:
    """Zone names and availability (the internal zone is hidden)."""
    req.context.can(POLICY % "list", target={})
    return views.zones(AvailabilityZoneService(req.services).summary())


def list_availability_zones_detail(req: ApiRequest) -> dict[str, Any]:
    """Zones with their hosts and services (admin)."""
    req.context.can(POLICY % "detail", target={})
    return views.zones(AvailabilityZoneService(req.services).detail())
