"""``GET /servers``: build requests first (servers not in a cell yet), then every cell's page
merged in sort order, with marker paging across both, as Nova's ``compute.API.get_all``.

Called by the servers list handlers with a ``ListQuery`` built by ``list_request.py``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from openkeel.api.context import RequestContext
from openkeel.api.services import ApiServices
from openkeel.api.usecases.servers.gathering import Located
from openkeel.db.engine import reader
from openkeel.db.repositories import (
    build_requests,
    instance_list,
    instance_mappings,
    instance_rows,
    instances,
)
from openkeel.db.repositories.flavors import FlavorRepository

# The query vocabulary the handler fills in: the repository's filters and the names of the
# partial relations a list view loads.
from openkeel.db.repositories.instance_list import InstanceFilters as InstanceFilters
from openkeel.db.repositories.instance_rows import FAULT_IF_SHOWN as FAULT_IF_SHOWN
from openkeel.db.repositories.instance_rows import LOCKED_REASON as LOCKED_REASON
from openkeel.domain.errors import ComputeError
from openkeel.domain.flavors import Viewer
from openkeel.domain.instances import FlavorSnapshot, Instance, InstanceNotFound, MarkerNotFound
from openkeel.domain.states import VmState


@dataclass(frozen=True)
class ListQuery:
    """A listing request after the API rules were applied."""

    filters: InstanceFilters
    flavor_ref: str | None = None
    limit: int = 1000
    marker: str | None = None
    sort_keys: tuple[str, ...] = ("created_at",)
    sort_dirs: tuple[str, ...] = ("desc",)
    all_tenants: bool = False
    cell_down_support: bool = False
    empty_status: bool = False
    # What to load beside the instance rows (``instance_rows.RELATIONS`` names).
    relations: frozenset[str] = instance_rows.RELATIONS


@dataclass(frozen=True)
class Page:
    """The servers of one page, in order."""

    located: list[Located] = field(default_factory=list)
    empty_status: bool = False


def _matches_build(inst: Instance, f: InstanceFilters) -> bool:
    """Nova filters build requests in Python: exact fields, regex on the others."""
    exact: dict[str, Any] = {
        "project_id": f.project_id,
        "user_id": f.user_id,
        "image_ref": f.image_ref,
        "host": f.host,
    }
    for name, wanted in exact.items():
        if wanted is not None and getattr(inst, name) != wanted:
            return False
    if f.uuids is not None and inst.uuid not in f.uuids:
        return False
    if f.flavor_id is not None and inst.flavor.id != f.flavor_id:
        return False
    if f.vm_states is not None and inst.vm_state not in f.vm_states:
        return False
    if f.task_states is not None and inst.task_state not in f.task_states:
        return False
    if f.status is not None and inst.vm_state not in f.status.vm_states:
        return False
    if f.locked is not None or f.changes_since or f.changes_before:
        return False
    return _matches_tags(inst, f) and _matches_regex(inst, f)


def _builds_can_match(f: InstanceFilters) -> bool:
    """False when the filters exclude what every build request is (vm_state building, not
    locked, never changed): the requests need not be read and decoded at all (a status poll
    during a boot burst)."""
    building = VmState.BUILDING.value
    if f.vm_states is not None and building not in f.vm_states:
        return False
    return not (f.status is not None and building not in f.status.vm_states)


def _matches_tags(inst: Instance, f: InstanceFilters) -> bool:
    tags = set(inst.tags)
    if f.tags and not set(f.tags) <= tags:
        return False
    if f.tags_any and not set(f.tags_any) & tags:
        return False
    if f.not_tags and set(f.not_tags) <= tags:
        return False
    return not (f.not_tags_any and set(f.not_tags_any) & tags)


def _matches_regex(inst: Instance, f: InstanceFilters) -> bool:
    patterns: dict[str, str] = dict(f.regex)
    for column, value in (
        ("display_name", f.name),
        ("node", f.node),
        ("reservation_id", f.reservation_id),
        ("availability_zone", f.availability_zone),
    ):
        if value is not None:
            patterns[column] = value
    for column, pattern in patterns.items():
        value = getattr(inst, column, None)
        if value is None or not re.search(pattern, str(value)):
            return False
    return True


class ServerLister:
    """Lists servers for one caller."""

    def __init__(self, services: ApiServices, context: RequestContext) -> None:
        self._services = services
        self._context = context
        self._cells: Mapping[str, sa.Engine] = services.cell_dbs or {}

    def page(self, query: ListQuery) -> Page:
        """One page of servers."""
        if query.empty_status:
            return Page(empty_status=True)
        filters = query.filters
        if query.flavor_ref is not None:
            flavor_id = self._flavor_pk(query.flavor_ref)
            if flavor_id is None:
                return Page()
            filters = InstanceFilters(**{**filters.__dict__, "flavor_id": flavor_id})
        keys, dirs = instance_list.normalize_sort(query.sort_keys, query.sort_dirs)
        builds, marker = self._builds(query, filters, keys, dirs)
        remaining = query.limit - len(builds)
        down: list[str] = []
        in_cells = self._from_cells(filters, keys, dirs, remaining, marker, down, query.relations)
        if down and query.cell_down_support and not query.all_tenants:
            in_cells = self._minimal(down, filters.project_id) + in_cells
        seen: set[str] = set()
        located: list[Located] = []
        for item in [Located(b, None) for b in builds] + in_cells:
            if item.instance.uuid not in seen:
                seen.add(item.instance.uuid)
                located.append(item)
        return Page(located[: query.limit])

    def _flavor_pk(self, flavor_ref: str) -> int | None:
        viewer = Viewer(self._context.project_id, True)
        try:
            return FlavorRepository(self._services.api_db).get(viewer, flavor_ref).id
        except ComputeError:
            return None

    def _builds(
        self, query: ListQuery, filters: InstanceFilters, keys: list[str], dirs: list[str]
    ) -> tuple[list[Instance], str | None]:
        marker = query.marker
        skip = (filters.ip is not None or filters.ip6 is not None) and marker is None
        if query.limit == 0 or filters.deleted or skip or not _builds_can_match(filters):
            return [], marker
        with reader(self._services.api_db).connect() as api:
            found = build_requests.list_build_requests(api, filters.project_id)
        matching = [b.instance for b in found if _matches_build(b.instance, filters)]
        matching.sort(key=instance_list.sort_key(keys, dirs))
        if marker is not None:
            uuids = [i.uuid for i in matching]
            if marker not in uuids:
                return [], marker
            matching = matching[uuids.index(marker) + 1 :]
        return matching[: query.limit], None

    def _marker_values(self, marker: str, keys: Sequence[str]) -> list[Any]:
        for engine in self._cells.values():
            with reader(engine).connect() as conn:
                try:
                    found = instances.get(conn, marker, read_deleted="yes")
                except InstanceNotFound:
                    continue
            return instance_list.sort_values(found, keys)
        raise MarkerNotFound(marker)

    def _from_cells(
        self,
        filters: InstanceFilters,
        keys: list[str],
        dirs: list[str],
        limit: int,
        marker: str | None,
        down: list[str],
        relations: frozenset[str] = instance_rows.RELATIONS,
    ) -> list[Located]:
        if limit <= 0:
            return []
        marker_values = self._marker_values(marker, keys) if marker is not None else None
        merged: list[tuple[Instance, str]] = []
        for cell_uuid, engine in self._cells.items():
            try:
                with reader(engine).connect() as conn:
                    page = instance_list.list_instances(
                        conn,
                        filters,
                        sort_keys=keys,
                        sort_dirs=dirs,
                        limit=limit,
                        marker_values=marker_values,
                        relations=relations,
                    )
            except sa.exc.OperationalError:
                down.append(cell_uuid)  # skipped, or shown minimally from 2.69
                continue
            merged.extend((inst, cell_uuid) for inst in page)
        if len({cell for _inst, cell in merged}) > 1:  # one cell's page is already in order
            order = instance_list.sort_key(keys, dirs)
            merged.sort(key=lambda pair: order(pair[0]))
        return [Located(inst, cell) for inst, cell in merged[:limit]]

    def _minimal(self, down: list[str], project_id: str | None) -> list[Located]:
        """What the API DB knows of the project's servers in unreachable cells (2.69)."""
        if project_id is None:
            return []
        with reader(self._services.api_db).connect() as api:
            mappings = instance_mappings.list_by_project(
                api, project_id, include_queued_for_delete=False
            )
        return [
            Located(
                unknown_instance(m.instance_uuid, m.project_id, m.created_at), m.cell_uuid, True
            )
            for m in mappings
            if m.cell_uuid in down
        ]


def unknown_instance(uuid: str, project_id: str, created_at: Any) -> Instance:
    """A placeholder instance for a server whose cell cannot be read."""
    return Instance(
        uuid=uuid,
        project_id=project_id,
        user_id="",
        flavor=UNKNOWN_FLAVOR,
        created_at=created_at,
    )


UNKNOWN_FLAVOR = FlavorSnapshot(flavorid="", name="", memory_mb=0, vcpus=0, root_gb=0)
