"""Availability zones as Nova derives them: from services and aggregate zone metadata.

Called by the ``os-availability-zone`` handlers. A compute service's zone is the
``availability_zone`` metadata of its host's aggregates (several joined by commas), else
``[DEFAULT] default_availability_zone``; every other service is in
``internal_service_availability_zone``. A zone is available when at least one of its services
is enabled; zones are listed sorted by name, available ones first.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from openkeel.api.services import ApiServices
from openkeel.db.repositories import availability_zones as repo

_API_BINARIES = frozenset({"nova-osapi_compute", "nova-metadata"})


@dataclass(frozen=True)
class ServiceState:
    """One service's row in the detailed listing."""

    binary: str
    available: bool
    active: bool
    updated_at: datetime.datetime | None


@dataclass(frozen=True)
class Zone:
    """One zone; ``hosts`` is None in the summary and for unavailable zones."""

    name: str
    available: bool
    hosts: dict[str, list[ServiceState]] | None = None


@dataclass(frozen=True)
class _Placed:
    row: repo.ServiceRow
    zone: str


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC).replace(tzinfo=None)


class AvailabilityZoneService:
    """Zones of the deployment (built from ``req.services``)."""

    def __init__(self, services: ApiServices) -> None:
        self._conf = services.conf
        self._api_db = services.api_db
        self._cell_dbs = services.cell_dbs or {}

    def _services(self) -> list[_Placed]:
        rows: list[repo.ServiceRow] = []
        for engine in self._cell_dbs.values():
            with engine.connect() as conn:
                rows.extend(repo.list_services(conn))
        compute_hosts = [r.host for r in rows if r.topic == "compute"]
        with self._api_db.connect() as conn:
            by_host = repo.zones_by_host(conn, compute_hosts)
        return [_Placed(row, self._zone_of(row, by_host)) for row in rows]

    def _zone_of(self, row: repo.ServiceRow, by_host: dict[str, set[str]]) -> str:
        if row.topic != "compute":
            return str(self._conf.internal_service_availability_zone)
        zones = by_host.get(row.host)
        return ",".join(sorted(zones)) if zones else str(self._conf.default_availability_zone)

    @staticmethod
    def _split(placed: list[_Placed]) -> tuple[list[str], list[str]]:
        available = {p.zone for p in placed if not p.row.disabled}
        unavailable = {p.zone for p in placed if p.row.disabled} - available
        return sorted(available), sorted(unavailable)

    def summary(self) -> list[Zone]:
        """Zones for the plain listing; the internal zone is hidden."""
        available, unavailable = self._split(self._services())
        internal = self._conf.internal_service_availability_zone
        return [Zone(z, True) for z in available if z != internal] + [
            Zone(z, False) for z in unavailable if z != internal
        ]

    def detail(self) -> list[Zone]:
        """Zones with their hosts and services (enabled, non-API services only)."""
        placed = self._services()
        available, unavailable = self._split(placed)
        hosts: dict[str, dict[str, list[ServiceState]]] = {}
        for item in placed:
            if item.row.disabled or item.row.binary in _API_BINARIES:
                continue
            zone_hosts = hosts.setdefault(item.zone, {})
            zone_hosts.setdefault(item.row.host, []).append(self._state(item.row))
        return [Zone(z, True, hosts.get(z, {})) for z in available] + [
            Zone(z, False) for z in unavailable
        ]

    def _state(self, row: repo.ServiceRow) -> ServiceState:
        return ServiceState(row.binary, self._is_up(row), not row.disabled, row.updated_at)

    def _is_up(self, row: repo.ServiceRow) -> bool:
        if row.forced_down:
            return False
        heartbeat = row.last_seen_up or row.created_at
        if heartbeat is None:
            return False
        elapsed = abs((_now() - heartbeat).total_seconds())
        return elapsed <= int(self._conf.service_down_time)
