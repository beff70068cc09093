"""Usage per project over a period (Nova's os-simple-tenant-usage).

Every instance, deleted ones included, in every cell that ran during [start, stop): launched
before ``stop`` and not terminated before ``start``. Its hours are the part of the period it
ran; the project's totals are hours times its flavor's vCPUs, memory and disk. Paging (2.40)
is over instances, oldest first, across cells; ``marker`` is an instance uuid.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from openkeel.api.services import ApiServices
from openkeel.db.engine import reader
from openkeel.db.repositories import instances
from openkeel.domain.errors import Invalid
from openkeel.domain.instances import Instance, InstanceNotFound


@dataclass(frozen=True)
class ServerUsage:
    instance: Instance
    hours: float

    @property
    def local_gb(self) -> int:
        return self.instance.flavor.root_gb + self.instance.flavor.ephemeral_gb


@dataclass(frozen=True)
class TenantUsage:
    tenant_id: str
    servers: tuple[ServerUsage, ...]

    def total(self, amount: str) -> float:
        """Hours times the flavor's ``amount`` (vcpus, memory_mb or local_gb), summed."""

        def of(server: ServerUsage) -> int:
            if amount == "local_gb":
                return server.local_gb
            return int(getattr(server.instance.flavor, amount))

        return float(sum(of(s) * s.hours for s in self.servers))

    @property
    def hours(self) -> float:
        return float(sum(s.hours for s in self.servers))


def _naive(value: datetime) -> datetime:
    return value.astimezone(UTC).replace(tzinfo=None) if value.tzinfo else value


def hours_in(instance: Instance, start: datetime, stop: datetime) -> float:
    """The hours of [start, stop) the instance ran (0 if it never launched)."""
    launched = instance.launched_at and _naive(instance.launched_at)
    terminated = instance.terminated_at and _naive(instance.terminated_at)
    if not launched or launched > stop or (terminated and terminated < start):
        return 0.0
    begin = max(launched, start)
    end = min(terminated, stop) if terminated else stop
    return (end - begin).total_seconds() / 3600.0


def usage(
    services: ApiServices,
    start: datetime,
    stop: datetime,
    *,
    project_id: str | None = None,
    limit: int | None = None,
    marker: str | None = None,
) -> tuple[list[TenantUsage], list[ServerUsage]]:
    """The projects' usages (in order of their first instance) and every instance's."""
    found: list[tuple[Any, str, Any]] = []
    for engine in services.cell_dbs.values():
        with reader(engine).connect() as conn:
            found += [(created, uuid, engine) for created, uuid in instances.active_in_window(conn, start, stop, project_id)]  # fmt: skip
    found.sort(key=lambda item: (item[0] or datetime.min, item[1]))
    if marker is not None:
        positions = [i for i, item in enumerate(found) if item[1] == marker]
        if not positions:
            raise Invalid(f"marker [{marker}] not found")
        found = found[positions[0] + 1 :]
    if limit is not None:
        found = found[:limit]
    loaded: dict[str, Instance] = {}
    for engine in {item[2] for item in found}:  # one connection per cell, not per instance
        with reader(engine).connect() as conn:
            for _created, uuid, owner in found:
                if owner is engine:
                    try:
                        loaded[uuid] = instances.get(conn, uuid, read_deleted="yes")
                    except InstanceNotFound:
                        continue
    servers = [
        ServerUsage(loaded[uuid], hours_in(loaded[uuid], start, stop))
        for _created, uuid, _engine in found
        if uuid in loaded
    ]
    by_project: dict[str, list[ServerUsage]] = {}
    for server in servers:
        by_project.setdefault(server.instance.project_id, []).append(server)
    return [TenantUsage(p, tuple(s)) for p, s in by_project.items()], servers
