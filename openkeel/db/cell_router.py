"""Routing to cell databases: an instance's cell, a host's cell, cell0, and scatter-gather.

Used by the servers API (show/list/delete across cells, 2.69 down-cell answers), conductor
(create the instance in the chosen host's cell or in cell0) and compute. Instance mappings and
host mappings live in the API DB; each cell DB is an ``Engine`` keyed by cell uuid. A cell whose
database raises ``OperationalError`` (or another connection-level DBAPI error) during a
scatter-gather is reported as down instead of failing the whole request.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

import sqlalchemy as sa

from openkeel.db.cells import CELL0_UUID
from openkeel.db.repositories import host_mappings, instance_mappings, instance_rows
from openkeel.db.repositories import instance_list as listing
from openkeel.db.repositories import instances as instance_repo
from openkeel.db.softdelete import ReadDeleted
from openkeel.domain.instances import (
    Instance,
    InstanceMappingNotFound,
    InstanceNotFound,
    MarkerNotFound,
)

T = TypeVar("T")


class CellDown(Exception):
    """A cell database did not answer (connection refused, lost, timed out)."""

    def __init__(self, cell_uuid: str, reason: str) -> None:
        super().__init__(f"Cell {cell_uuid} is down: {reason}")
        self.cell_uuid = cell_uuid
        self.reason = reason


@dataclass(frozen=True)
class InstancePage:
    """Instances merged over the cells that answered; ``down_cells`` did not."""

    instances: list[Instance]
    down_cells: tuple[str, ...] = ()


def is_cell_failure(exc: BaseException) -> bool:
    """Whether ``exc`` means the cell DB is unreachable rather than a bug in the query."""
    if isinstance(exc, sa.exc.OperationalError | sa.exc.InterfaceError):
        return True
    return isinstance(exc, sa.exc.DBAPIError) and bool(exc.connection_invalidated)


class CellRouter:
    """Finds the cell DB engine for instances and hosts, and queries all cells at once."""

    def __init__(
        self,
        api_engine: sa.Engine,
        cell_engines: Mapping[str, sa.Engine],
        *,
        parallel: bool = True,
    ) -> None:
        self.api_engine = api_engine
        self.cell_engines = dict(cell_engines)
        self.parallel = parallel

    # --- routing -------------------------------------------------------------------------------

    def engine_for_cell(self, cell_uuid: str) -> sa.Engine:
        try:
            return self.cell_engines[cell_uuid]
        except KeyError:
            raise CellDown(cell_uuid, "no database configured for this cell") from None

    def cell0_engine(self) -> sa.Engine:
        return self.engine_for_cell(CELL0_UUID)

    def cell_of_instance(self, instance_uuid: str) -> str | None:
        """The instance's cell uuid, None while it is not scheduled yet.

        ``InstanceMappingNotFound`` (a 404 ``NotFound``) if it has no mapping.
        """
        with self.api_engine.connect() as conn:
            return instance_mappings.get(conn, instance_uuid).cell_uuid

    def engine_for_instance(self, instance_uuid: str) -> sa.Engine:
        """The cell DB holding the instance; ``InstanceNotFound`` if unmapped or in no cell yet."""
        try:
            cell_uuid = self.cell_of_instance(instance_uuid)
        except InstanceMappingNotFound:
            raise InstanceNotFound(instance_uuid) from None
        if cell_uuid is None:
            raise InstanceNotFound(instance_uuid)
        return self.engine_for_cell(cell_uuid)

    def cell_of_host(self, host: str) -> str:
        """The host's cell uuid; ``HostMappingNotFound`` if the host is not mapped."""
        with self.api_engine.connect() as conn:
            return host_mappings.get(conn, host).cell_uuid

    def engine_for_host(self, host: str) -> sa.Engine:
        return self.engine_for_cell(self.cell_of_host(host))

    def get_instance(self, instance_uuid: str, *, read_deleted: ReadDeleted = "no") -> Instance:
        """The instance from its cell (``InstanceNotFound``/``InstanceMappingNotFound``: 404)."""
        with self.engine_for_instance(instance_uuid).connect() as conn:
            return instance_repo.get(conn, instance_uuid, read_deleted=read_deleted)

    # --- scatter-gather ------------------------------------------------------------------------

    def scatter(
        self, fn: Callable[[sa.Connection], T], cells: Iterable[str] | None = None
    ) -> dict[str, T | CellDown]:
        """Run ``fn`` on a connection to each cell (all by default); a failed cell → CellDown."""
        wanted = list(self.cell_engines if cells is None else cells)

        def one(cell_uuid: str) -> T | CellDown:
            try:
                with self.engine_for_cell(cell_uuid).connect() as conn:
                    return fn(conn)
            except CellDown as down:
                return down
            except sa.exc.DBAPIError as exc:
                if not is_cell_failure(exc):
                    raise
                return CellDown(cell_uuid, str(exc.orig or exc).splitlines()[0])

        if not self.parallel or len(wanted) < 2:
            return {cell: one(cell) for cell in wanted}
        with ThreadPoolExecutor(max_workers=len(wanted)) as pool:
            return dict(zip(wanted, pool.map(one, wanted), strict=True))

    def find_marker(self, marker: str) -> Instance:
        """The marker instance (deleted ones too); ``MarkerNotFound`` (400) if none."""
        try:
            cell_uuid = self.cell_of_instance(marker)
        except InstanceNotFound:
            cell_uuid = None
        cells = [cell_uuid] if cell_uuid else list(self.cell_engines)

        def lookup(conn: sa.Connection) -> Instance | None:
            try:
                return instance_repo.get(conn, marker, read_deleted="yes")
            except InstanceNotFound:
                return None

        for found in self.scatter(lookup, cells).values():
            if isinstance(found, Instance):
                return found
        raise MarkerNotFound(marker)

    def list_instances(
        self,
        filters: listing.InstanceFilters,
        *,
        sort_keys: Sequence[str] | None = None,
        sort_dirs: Sequence[str] | None = None,
        limit: int | None = None,
        marker: str | None = None,
        cells: Iterable[str] | None = None,
        relations: frozenset[str] = instance_rows.RELATIONS,
    ) -> InstancePage:
        """One page over all cells, merged in sort order, with Nova's limit/marker."""
        keys, dirs = listing.normalize_sort(sort_keys, sort_dirs)
        if limit == 0:
            return InstancePage([])
        marker_values = None
        if marker is not None:
            marker_values = listing.sort_values(self.find_marker(marker), keys)

        def page(conn: sa.Connection) -> list[Instance]:
            return listing.list_instances(
                conn,
                filters,
                sort_keys=keys,
                sort_dirs=dirs,
                limit=limit,
                marker_values=marker_values,
                relations=relations,
            )

        results = self.scatter(page, cells)
        down = tuple(cell for cell, got in results.items() if isinstance(got, CellDown))
        pages = [got for got in results.values() if not isinstance(got, CellDown)]
        merged = heapq.merge(*pages, key=listing.sort_key(keys, dirs))
        found = list(itertools.islice(merged, limit))
        return InstancePage(found, down)

    def count_usage(
        self, project_id: str, user_id: str | None = None
    ) -> tuple[dict[str, int], dict[str, int], tuple[str, ...]]:
        """Instances/cores/ram of the project and user summed over the cells that answered."""
        project = {"instances": 0, "cores": 0, "ram": 0}
        user = dict(project) if user_id else {}

        def count(conn: sa.Connection) -> Any:
            return instance_repo.count_usage(conn, project_id, user_id)

        down: list[str] = []
        for cell, usage in self.scatter(count).items():
            if isinstance(usage, CellDown):
                down.append(cell)
                continue
            for key in project:
                project[key] += usage.project[key]
                if user_id:
                    user[key] += usage.user[key]
        return project, user, tuple(down)
