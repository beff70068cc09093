"""Response bodies of ``/os-availability-zone``."""

from __future__ import annotations

from typing import Any

from openkeel.api.usecases.availability_zones import ServiceState, Zone

_TIME_FORMAT = "%Y-%m-%dT%H:%M:%S.%f"


def _services(states: list[ServiceState]) -> dict[str, Any]:
    return {
        s.binary: {
            "available": s.available,
            "active": s.active,
            "updated_at": s.updated_at.strftime(_TIME_FORMAT) if s.updated_at else None,
        }
        for s in states
    }


def _hosts(zone: Zone) -> dict[str, Any] | None:
    if zone.hosts is None:
        return None
    return {host: _services(states) for host, states in zone.hosts.items()}


def zones(listed: list[Zone]) -> dict[str, Any]:
    """``{"availabilityZoneInfo": [...]}``."""
    return {
        "availabilityZoneInfo": [
            {"zoneName": z.name, "zoneState": {"available": z.available}, "hosts": _hosts(z)}
            for z in listed
        ]
    }
