"""Service records across cells as Nova's HostAPI sees them, for ``os-services``.

Called by the ``os-services`` handlers (and ``hypervisors`` for the up/down state). A service
is up when it is not forced down and its last heartbeat (``last_seen_up``, else
``created_at``) is within ``[DEFAULT] service_down_time`` — Nova's DB servicegroup driver.
"""

from __future__ import annotations

import datetime
import uuid as uuidlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from openkeel.api.services import ApiServices
from openkeel.db.repositories import availability_zones as zones_repo
from openkeel.db.repositories import compute_nodes as nodes_repo
from openkeel.db.repositories import services as repo
from openkeel.domain.errors import Conflict, Invalid, NotFound
from openkeel.notifications.versioned import STATUS_FIELDS, service_status

API_BINARIES = frozenset({"nova-osapi_compute", "nova-metadata"})
COMPUTE = "nova-compute"
CELL0_UUID = "00000000-0000-0000-0000-000000000000"


def is_uuid_like(value: str) -> bool:
    """Nova's (oslo's) UUID test: any hyphenation and case of 32 hex digits."""
    try:
        return uuidlib.UUID(value).hex == value.replace("-", "").lower()
    except ValueError:
        return False


def service_is_up(service: repo.ServiceRecord, down_time: int) -> bool:
    """Nova's DB servicegroup verdict on one service."""
    if service.forced_down:
        return False
    heartbeat = service.last_seen_up or service.created_at
    if heartbeat is None:
        return False
    now = datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
    return abs((now - heartbeat.replace(tzinfo=None)).total_seconds()) <= down_time


@dataclass(frozen=True)
class ServiceState:
    """A service with what the API shows beside its record."""

    record: repo.ServiceRecord
    zone: str
    up: bool


@dataclass(frozen=True)
class Located:
    """A service and the cell database holding it."""

    record: repo.ServiceRecord
    cell: sa.Engine


def update_not_supported(binary: str) -> Invalid:
    """Nova's 400 for updating a service other than nova-compute."""
    return Invalid(
        f"Updating a {binary} service is not supported. Only nova-compute services can be updated."
    )


class ServiceAdmin:
    """Listing, updating and deleting services (built from ``req.services``)."""

    def __init__(self, services: ApiServices) -> None:
        self._conf = services.conf
        self._api_db: sa.Engine = services.api_db
        self._cells: Mapping[str, sa.Engine] = services.cell_dbs or {}
        self._notifier = services.notifier

    def is_up(self, service: repo.ServiceRecord) -> bool:
        """Whether ``service`` counts as up now."""
        return service_is_up(service, int(self._conf.service_down_time))

    def listing(self, host: str | None, binary: str | None) -> list[ServiceState]:
        """Every non-API service of every cell, filtered by exact host and binary."""
        rows: list[repo.ServiceRecord] = []
        for engine in self._cells.values():
            with engine.connect() as conn:
                rows.extend(repo.list_services(conn, host or None, binary or None))
        rows = [r for r in rows if r.binary not in API_BINARIES]
        return [
            ServiceState(r, z, self.is_up(r)) for r, z in zip(rows, self._zones(rows), strict=True)
        ]

    def state(self, service: repo.ServiceRecord) -> ServiceState:
        """``service`` with its zone and up/down state."""
        return ServiceState(service, self._zones([service])[0], self.is_up(service))

    def _zones(self, rows: list[repo.ServiceRecord]) -> list[str]:
        compute_hosts = [r.host for r in rows if r.binary == COMPUTE]
        with self._api_db.connect() as conn:
            by_host = zones_repo.zones_by_host(conn, compute_hosts)
        internal = str(self._conf.internal_service_availability_zone)
        default = str(self._conf.default_availability_zone)
        return [
            (",".join(sorted(by_host[r.host])) if r.host in by_host else default)
            if r.binary == COMPUTE
            else internal
            for r in rows
        ]

    def find(self, service_id: str) -> Located:
        """The service with this uuid (or integer id, already validated) in any cell; 404
        when absent.

        An integer id found in several cells is refused as Nova does.
        """
        found: Located | None = None
        is_uuid = is_uuid_like(service_id)
        if not is_uuid and not -(2**31) <= int(service_id) < 2**31:
            raise NotFound(f"Service {service_id} could not be found.")
        for engine in self._cells.values():
            with engine.connect() as conn:
                if is_uuid:
                    row = repo.get_service_by_uuid(conn, service_id)
                else:
                    row = repo.get_service(conn, int(service_id))
            if row is None:
                continue
            if found is not None:
                raise Invalid(f"Service id {service_id} refers to multiple services.")
            found = Located(row, engine)
            if is_uuid:
                break
        if found is None:
            raise NotFound(f"Service {service_id} could not be found.")
        return found

    def update_by_host(self, host: str, binary: str, values: dict[str, Any]) -> None:
        """Update the ``binary`` service of ``host``, located by its host mapping."""
        if binary != COMPUTE:
            raise update_not_supported(binary)
        with self._api_db.connect() as conn:
            cell_uuid = repo.host_cell(conn, host)
        engine = self._cells.get(cell_uuid or "")
        if engine is None:
            raise NotFound(f"Host '{host}' is not mapped to any cell")
        with engine.begin() as conn:
            service = repo.get_by_host_and_binary(conn, host, binary)
            if service is None:
                raise NotFound(f"Could not find binary {binary} on host {host}.")
            repo.update_service(conn, service.id, **values)
            fresh = repo.get_service(conn, service.id)
        if fresh is not None:
            self._notify("update", fresh, values)

    def update(self, located: Located, values: dict[str, Any]) -> repo.ServiceRecord:
        """Save ``values`` on a located service and return the new record."""
        with located.cell.begin() as conn:
            repo.update_service(conn, located.record.id, **values)
            fresh = repo.get_service(conn, located.record.id)
        assert fresh is not None
        self._notify("update", fresh, values)
        return fresh

    def _notify(self, action: str, record: repo.ServiceRecord, values: Mapping[str, Any]) -> None:
        """service.<action> published as the service itself (Nova's from_service_obj), for a
        delete or a change of its status fields."""
        if action == "delete" or STATUS_FIELDS.intersection(values):
            notifier = self._notifier.prepare(record.binary, record.host)
            notifier.service(action, service_status(record))

    def check_force_up(self, host: str) -> None:
        """Refuse to un-force-down a host that still has ``done`` evacuations."""
        for engine in self._cells.values():
            with engine.connect() as conn:
                if repo.done_evacuations_from(conn, host):
                    raise Invalid(
                        f"Unable to force up host {host} as `done` evacuation migration records "
                        "remain associated with the host. Ensure the compute service has been "
                        "restarted, allowing these records to move to `completed` before "
                        "retrying this request."
                    )

    def delete(self, service_id: str) -> None:
        """Delete a service; a compute service must host no instances nor migrations."""
        located = self.find(service_id)
        service = located.record
        with located.cell.begin() as conn:
            if service.binary == COMPUTE:
                self._check_deletable(conn, service)
                with self._api_db.begin() as api_conn:
                    repo.unmap_host(api_conn, service.host)
            repo.destroy_service(conn, service)
        self._notify("delete", service, {})

    @staticmethod
    def _check_deletable(conn: sa.Connection, service: repo.ServiceRecord) -> None:
        if nodes_repo.count_servers_on_host(conn, service.host):
            raise Conflict(
                "Unable to delete compute service that is hosting instances. Migrate or "
                "delete the instances first."
            )
        for node in nodes_repo.nodes_of_host(conn, service.host):
            if repo.migrations_in_progress(conn, service.host, node.hypervisor_hostname):
                raise Conflict(
                    "Unable to delete compute service that has in-progress migrations. "
                    "Complete the migrations or delete the instances first."
                )
