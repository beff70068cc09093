"""Host states: what filters and weighers know of a compute node during one request.

``HostStateSource.load`` builds them per request from the ``compute_nodes`` rows (of every
cell DB except cell0) whose uuid is one of the Placement candidates' providers, the compute
``services`` rows of their hosts, the host aggregates, and the instance map. ``HostState`` is
mutable only through ``consume``: a multi-instance request consumes what it placed.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from openkeel.clients.placement_models import AllocationRequest, ProviderSummary
from openkeel.db.cells import CELL0_UUID
from openkeel.db.repositories import scheduler_hosts as repo
from openkeel.domain.aggregates import AZ_KEY, Aggregate
from openkeel.scheduler.instance_map import InstanceHostMap
from openkeel.scheduler.request import SchedulingRequest

# Nova's initial allocation ratios, used when a node row has none.
DEFAULT_RATIOS = {"cpu": 16.0, "ram": 1.5, "disk": 1.0}

Clock = Callable[[], datetime.datetime]


def utcnow() -> datetime.datetime:
    """Naive UTC now, as the DB columns store times."""
    return datetime.datetime.now(datetime.UTC).replace(tzinfo=None)


@dataclass(frozen=True)
class ServiceState:
    """The compute service of a host as ComputeFilter judges it."""

    disabled: bool = False
    disabled_reason: str | None = None
    forced_down: bool = False
    last_heartbeat: datetime.datetime | None = None

    def is_up(self, now: datetime.datetime, down_time: int) -> bool:
        """Nova's DB servicegroup rule: not forced down, heard from within ``down_time``."""
        if self.forced_down or self.last_heartbeat is None:
            return False
        return abs((now - self.last_heartbeat).total_seconds()) <= down_time


@dataclass
class HostState:
    """One compute node (Placement provider ``uuid``) of host ``host`` in cell ``cell_uuid``."""

    uuid: str
    host: str
    nodename: str
    cell_uuid: str
    vcpus_total: int = 0
    vcpus_used: int = 0
    cpu_allocation_ratio: float = DEFAULT_RATIOS["cpu"]
    total_usable_ram_mb: int = 0
    free_ram_mb: int = 0
    ram_allocation_ratio: float = DEFAULT_RATIOS["ram"]
    total_usable_disk_gb: int = 0
    free_disk_mb: int = 0
    disk_allocation_ratio: float = DEFAULT_RATIOS["disk"]
    hypervisor_type: str = ""
    hypervisor_version: int = 0
    host_ip: str | None = None
    supported_instances: tuple[tuple[str | None, ...], ...] = ()
    cpu_info: Mapping[str, Any] = field(default_factory=dict)
    stats: Mapping[str, Any] = field(default_factory=dict)
    num_instances: int = 0
    service: ServiceState = field(default_factory=ServiceState)
    aggregates: tuple[Aggregate, ...] = ()
    availability_zones: tuple[str, ...] = ("nova",)
    instances: set[str] = field(default_factory=set)
    allocation_candidates: list[AllocationRequest] = field(default_factory=list)

    def aggregate_values(self, key: str) -> list[str]:
        """The values of metadata ``key`` over the host's aggregates."""
        return [agg.metadata[key] for agg in self.aggregates if key in agg.metadata]

    def use_current_usage(self, summary: ProviderSummary) -> None:
        """Take free RAM, free disk and used VCPUs from Placement's summary of this node.

        The ``compute_nodes`` row changes only at the compute's resource audit (60 s), so every
        request of a burst between two audits saw the same free RAM and the weighers stacked
        the whole burst on one host. Placement's usage includes every claim made so far, by
        this scheduler or another. Capacity is ``(total - reserved) * ratio``, so free is
        ``capacity / ratio - used``, what the row says right after an audit.
        """
        for rc, ratio, apply in (
            ("MEMORY_MB", self.ram_allocation_ratio, self._set_free_ram),
            ("DISK_GB", self.disk_allocation_ratio, self._set_free_disk),
        ):
            found = summary.resources.get(rc)
            if found is not None and ratio > 0:
                apply(int(found.capacity / ratio) - found.used)
        vcpu = summary.resources.get("VCPU")
        if vcpu is not None:
            self.vcpus_used = vcpu.used

    def _set_free_ram(self, free_mb: int) -> None:
        self.free_ram_mb = free_mb

    def _set_free_disk(self, free_gb: int) -> None:
        self.free_disk_mb = free_gb * 1024

    def consume(self, request: SchedulingRequest) -> None:
        """Account for one instance of ``request`` placed here (Nova's consume_from_request)."""
        flavor = request.flavor
        root = 0 if request.is_bfv else flavor.root_gb
        self.free_ram_mb -= flavor.memory_mb
        self.free_disk_mb -= (root + flavor.ephemeral_gb) * 1024
        self.vcpus_used += flavor.vcpus
        self.num_instances += 1
        if request.instance_uuid:
            self.instances.add(request.instance_uuid)

    def __repr__(self) -> str:
        return (
            f"({self.host}, {self.nodename}) ram: {self.free_ram_mb}MB disk: {self.free_disk_mb}MB"
        )


def _json(text: str | None, default: Any) -> Any:
    if not text:
        return default
    try:
        return json.loads(text)
    except ValueError:
        return default


def _ratio(value: float | None, kind: str) -> float:
    return float(value) if value else DEFAULT_RATIOS[kind]


def _free_disk_gb(row: repo.NodeRow) -> int:
    free = row.free_disk_gb if row.free_disk_gb is not None else row.local_gb - row.local_gb_used
    if row.disk_available_least is not None:
        free = min(free, row.disk_available_least)
    return free


def host_state_from_rows(
    row: repo.NodeRow,
    cell_uuid: str,
    service: repo.ServiceRow | None,
    aggregates: Sequence[Aggregate],
    default_az: str,
) -> HostState:
    """The host state of one node row (free RAM/disk as the resource tracker reported)."""
    free_ram = (
        row.free_ram_mb if row.free_ram_mb is not None else row.memory_mb - row.memory_mb_used
    )
    zones = sorted({agg.metadata[AZ_KEY] for agg in aggregates if AZ_KEY in agg.metadata})
    return HostState(
        uuid=row.uuid,
        host=row.host,
        nodename=row.hypervisor_hostname,
        cell_uuid=cell_uuid,
        vcpus_total=row.vcpus,
        vcpus_used=row.vcpus_used,
        cpu_allocation_ratio=_ratio(row.cpu_allocation_ratio, "cpu"),
        total_usable_ram_mb=row.memory_mb,
        free_ram_mb=free_ram,
        ram_allocation_ratio=_ratio(row.ram_allocation_ratio, "ram"),
        total_usable_disk_gb=row.local_gb,
        free_disk_mb=_free_disk_gb(row) * 1024,
        disk_allocation_ratio=_ratio(row.disk_allocation_ratio, "disk"),
        hypervisor_type=row.hypervisor_type,
        hypervisor_version=row.hypervisor_version,
        host_ip=row.host_ip,
        supported_instances=tuple(tuple(item) for item in _json(row.supported_instances, [])),
        cpu_info=_json(row.cpu_info, {}),
        stats=_json(row.stats, {}),
        num_instances=row.running_vms or 0,
        service=_service_state(service),
        aggregates=tuple(aggregates),
        availability_zones=tuple(zones) if zones else (default_az,),
    )


def _service_state(row: repo.ServiceRow | None) -> ServiceState:
    if row is None:  # a node without a live service is as good as down
        return ServiceState(disabled=True, disabled_reason="no compute service", forced_down=True)
    return ServiceState(
        disabled=row.disabled,
        disabled_reason=row.disabled_reason,
        forced_down=row.forced_down,
        last_heartbeat=row.last_seen_up or row.updated_at or row.created_at,
    )


class HostStateSource:
    """Reads host states and node look-ups from the cell DBs (cell0 excluded)."""

    def __init__(
        self,
        cells: Mapping[str, sa.Engine],
        instance_map: InstanceHostMap,
        *,
        default_az: str = "nova",
    ) -> None:
        self._cells = {uuid: engine for uuid, engine in cells.items() if uuid != CELL0_UUID}
        self._instances = instance_map
        self._default_az = default_az

    def load(
        self, provider_uuids: Iterable[str], aggregates: Sequence[Aggregate]
    ) -> list[HostState]:
        """Host states of the compute nodes among ``provider_uuids``, in a stable order."""
        wanted = list(provider_uuids)
        by_host: dict[str, list[Aggregate]] = {}
        for agg in aggregates:
            for host in agg.hosts:
                by_host.setdefault(host, []).append(agg)
        states: list[HostState] = []
        for cell_uuid, engine in sorted(self._cells.items()):
            with engine.connect() as conn:
                rows = repo.nodes_by_uuids(conn, wanted)
                services = repo.compute_services(conn, {row.host for row in rows})
            for row in rows:
                state = host_state_from_rows(
                    row,
                    cell_uuid,
                    services.get(row.host),
                    by_host.get(row.host, ()),
                    self._default_az,
                )
                state.instances = set(self._instances.on_host(row.host))
                states.append(state)
        return sorted(states, key=lambda s: (s.host, s.nodename))

    def find_nodes(
        self, host: str | None, node: str | None, cell: str | None = None
    ) -> list[tuple[str, repo.NodeRow]]:
        """(cell uuid, node row) of the nodes of ``host`` and/or named ``node``."""
        found: list[tuple[str, repo.NodeRow]] = []
        for cell_uuid, engine in sorted(self._cells.items()):
            if cell is not None and cell != cell_uuid:
                continue
            with engine.connect() as conn:
                found.extend(
                    (cell_uuid, row) for row in repo.nodes_by_host_or_node(conn, host, node)
                )
        return found

    def refresh_instances(self, uuids: Iterable[str]) -> None:
        """Update the instance map for ``uuids`` from the cell DBs."""
        asked = sorted(set(uuids))
        if not asked:
            return
        for engine in self._cells.values():
            with engine.connect() as conn:
                located, gone = repo.instance_hosts(conn, asked)
            self._instances.refresh(located, gone)
