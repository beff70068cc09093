"""Turn instances (from cells or build requests) into ``ServerRecord``s with a fixed number of
batched queries per page: attached volumes per cell, host zones, server groups, request-spec
placement and host status only when the microversion/policy needs them.

Called by ``lookup.py`` (one server) and ``listing.py`` (a page).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa

from openkeel.api.services import ApiServices
from openkeel.api.usecases.servers.records import AttachedVolume, ServerRecord
from openkeel.db.readers import Readers
from openkeel.db.repositories import server_extras
from openkeel.domain.instances import Instance

HOST_UP = "UP"
HOST_DOWN = "DOWN"
HOST_MAINTENANCE = "MAINTENANCE"
HOST_UNKNOWN = "UNKNOWN"
HOST_NONE = ""


@dataclass(frozen=True)
class Wanted:
    """Which extra facts to load. ``host_status``: None no, False any status, True only
    UNKNOWN (Nova's ``show:host_status:unknown-only``)."""

    volumes: bool = True
    server_groups: bool = False
    placement: bool = False
    host_status: bool | None = None


@dataclass(frozen=True)
class Located:
    """An instance and the cell it was read from (None: still a build request)."""

    instance: Instance
    cell_uuid: str | None
    down: bool = False


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


class RecordGatherer:
    """Loads the facts around a page of instances."""

    def __init__(self, services: ApiServices) -> None:
        self._services = services
        self._cells: Mapping[str, sa.Engine] = services.cell_dbs or {}
        self._conf = services.conf
        self._default_zone: str | None = services.conf.default_availability_zone
        self._down_time = int(services.conf.service_down_time)
        self._status_of_host: dict[str, str] = {}

    def gather(
        self, located: Sequence[Located], wanted: Wanted, readers: Readers | None = None
    ) -> list[ServerRecord]:
        """One record per located instance, in the same order (``readers``: the request's
        reader connections; default: this call's own)."""
        if not located:
            return []
        if readers is None:
            with Readers() as own:
                return self.gather(located, wanted, own)
        by_cell: dict[str, list[Instance]] = {}
        for item in located:
            if item.cell_uuid is not None and not item.down:
                by_cell.setdefault(item.cell_uuid, []).append(item.instance)
        volumes: dict[str, list[tuple[str, bool]]] = {}
        services: dict[str, Any] = {}
        for cell_uuid, instances in by_cell.items():
            engine = self._cells.get(cell_uuid)
            if engine is None:
                continue
            conn = readers.conn(engine)
            if wanted.volumes:
                volumes.update(server_extras.volumes_by_instance(conn, [i.uuid for i in instances]))
            if wanted.host_status is not None:
                hosts = [i.host for i in instances if i.host]
                services.update(server_extras.compute_services_by_host(conn, hosts))
        uuids = [item.instance.uuid for item in located]
        hosts = [item.instance.host for item in located if item.instance.host]
        zones = self._services.caches.host_zones.zones(self._services.api_db, hosts, readers)
        groups: dict[str, str] = {}
        specs: dict[str, tuple[str | None, Any]] = {}
        if wanted.server_groups or wanted.placement:
            api = readers.conn(self._services.api_db)
            if wanted.server_groups:
                groups = server_extras.groups_by_instance(api, uuids)
            if wanted.placement:
                specs = server_extras.spec_placement_by_instance(api, uuids)
        return [
            self._record(item, volumes, zones, groups, specs, services, wanted) for item in located
        ]

    def _record(
        self,
        item: Located,
        volumes: Mapping[str, list[tuple[str, bool]]],
        zones: Mapping[str, set[str]],
        groups: Mapping[str, str],
        specs: Mapping[str, tuple[str | None, Any]],
        services: Mapping[str, Any],
        wanted: Wanted,
    ) -> ServerRecord:
        inst = item.instance
        pinned, hints = specs.get(inst.uuid, (None, None))
        group = groups.get(inst.uuid)
        if item.down:
            return ServerRecord(instance=inst, server_groups=(group,) if group else (), down=True)
        return ServerRecord(
            instance=inst,
            volumes=tuple(AttachedVolume(v, d) for v, d in volumes.get(inst.uuid, [])),
            availability_zone=self._zone(inst, zones),
            server_groups=(group,) if group else (),
            pinned_az=pinned,
            scheduler_hints=hints,
            host_status=self._host_status(inst, services, wanted.host_status),
            down=item.down,
        )

    def _zone(self, inst: Instance, zones: Mapping[str, set[str]]) -> str | None:
        if not inst.host:
            return inst.availability_zone
        found = sorted(zones.get(inst.host, ()))
        return found[0] if found else self._default_zone

    def _host_status(
        self, inst: Instance, services: Mapping[str, Any], unknown_only: bool | None
    ) -> str | None:
        if unknown_only is None:
            return None
        status = self._status_of_host.get(inst.host) if inst.host else HOST_NONE
        if status is None:  # once per host and request: a page has many servers per host
            status = HOST_NONE
            row = services.get(inst.host or "")
            if row is not None:
                if row["forced_down"]:
                    status = HOST_DOWN
                elif row["disabled"]:
                    status = HOST_MAINTENANCE
                else:
                    status = HOST_UP if self._is_up(row) else HOST_UNKNOWN
            self._status_of_host[inst.host or ""] = status
        if unknown_only and status != HOST_UNKNOWN:
            return None
        return status

    def _is_up(self, row: Any) -> bool:
        heartbeat = row["last_seen_up"] or row["updated_at"] or row["created_at"]
        if heartbeat is None:
            return False
        elapsed = abs((_now() - heartbeat).total_seconds())
        return bool(elapsed <= self._down_time)


def minimal(record: ServerRecord) -> ServerRecord:
    """The same record marked as coming from a down cell."""
    return replace(record, down=True)
