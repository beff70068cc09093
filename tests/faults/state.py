"""Reading a cloud's state for the invariants: its databases and its API, read-only.

The API DB (``build_requests``, ``instance_mappings``, ``cell_mappings``), every cell DB the
API DB maps (``instances``, ``migrations``), Placement's DB (``allocations`` by consumer,
provider and resource class) and, through the API as admin, the server list, a ``GET`` of each
server and each project's quota usage. Used by ``tests/faults/invariants.py``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx
import sqlalchemy as sa

from openkeel.db.engine import make_engine
from openkeel.db.schema import api as api_tables
from openkeel.db.schema import cell as cell_tables

ADMIN = {"X-Auth-Token": "admin:admin", "OpenStack-API-Version": "compute 2.47"}


@dataclass(frozen=True)
class Deployment:
    """Where to look: the API root (``http://host:port``) and the databases."""

    api_url: str
    api_db_url: str
    placement_db_url: str


# --- database state -------------------------------------------------------------------------


@dataclass(frozen=True)
class Instance:
    uuid: str
    cell: str
    project: str
    vm_state: str | None
    task_state: str | None
    host: str | None
    node: str | None
    vcpus: int
    memory_mb: int
    deleted: bool


@dataclass(frozen=True)
class Mapping:
    uuid: str
    cell: str | None
    project: str
    queued_for_delete: bool


@dataclass
class DbState:
    """The rows the invariants are about, from every database at (nearly) one moment."""

    build_requests: dict[str, str] = field(default_factory=dict)  # uuid -> project
    mappings: dict[str, Mapping] = field(default_factory=dict)
    instances: dict[str, list[Instance]] = field(default_factory=dict)  # uuid -> rows, all cells
    migrations: dict[str, tuple[str, str]] = field(default_factory=dict)  # uuid -> inst, status
    allocations: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)
    empty_consumers: set[str] = field(default_factory=set)  # Placement rows, no allocations

    def live(self, uuid: str) -> Instance | None:
        return next((i for i in self.instances.get(uuid, []) if not i.deleted), None)

    def live_instances(self) -> Iterator[Instance]:
        for rows in self.instances.values():
            yield from (i for i in rows if not i.deleted)


@contextmanager
def _engine(url: str) -> Iterator[sa.Engine]:
    """A read-only engine. SQLite files are opened ``mode=ro`` without the product's engine
    settings: those switch a file to WAL and begin every transaction IMMEDIATE (taking the
    write lock), which would make the checker itself a writer the product waits for."""
    parsed = sa.make_url(url)
    if parsed.get_backend_name() == "sqlite":
        readonly = f"sqlite:///file:{parsed.database}?mode=ro&uri=true"
        engine = sa.create_engine(readonly, poolclass=sa.pool.NullPool)
    else:
        engine = make_engine(url)
    try:
        yield engine
    finally:
        engine.dispose()


def read_databases(deployment: Deployment) -> DbState:
    """Read the API DB, every cell DB it maps and Placement's DB."""
    state = DbState()
    with _engine(deployment.api_db_url) as api_db, api_db.connect() as conn:
        cells = _read_api_db(conn, state)
    for cell_uuid, url in cells.values():
        with _engine(url) as cell_db, cell_db.connect() as conn:
            _read_cell_db(conn, cell_uuid, state)
    state.allocations = read_allocations(deployment.placement_db_url)
    state.empty_consumers = read_empty_consumers(deployment.placement_db_url)
    return state


def _read_api_db(conn: sa.Connection, state: DbState) -> dict[int, tuple[str, str]]:
    cm, im, br = api_tables.cell_mappings, api_tables.instance_mappings, api_tables.build_requests
    cells = {
        row.id: (row.uuid, row.database_connection)
        for row in conn.execute(sa.select(cm.c.id, cm.c.uuid, cm.c.database_connection))
        if row.database_connection
    }
    for row in conn.execute(sa.select(br.c.instance_uuid, br.c.project_id)):
        state.build_requests[row.instance_uuid] = row.project_id
    query = sa.select(im.c.instance_uuid, im.c.cell_id, im.c.project_id, im.c.queued_for_delete)
    for row in conn.execute(query):
        cell = cells[row.cell_id][0] if row.cell_id in cells else None
        state.mappings[row.instance_uuid] = Mapping(
            row.instance_uuid, cell, row.project_id, bool(row.queued_for_delete)
        )
    return cells


def _read_cell_db(conn: sa.Connection, cell_uuid: str, state: DbState) -> None:
    t = cell_tables.instances
    columns = (t.c.uuid, t.c.project_id, t.c.vm_state, t.c.task_state, t.c.host, t.c.node)
    query = sa.select(*columns, t.c.vcpus, t.c.memory_mb, t.c.deleted)
    for row in conn.execute(query):
        state.instances.setdefault(row.uuid, []).append(_instance(row, cell_uuid))
    m = cell_tables.migrations
    query = sa.select(m.c.uuid, m.c.instance_uuid, m.c.status).where(m.c.deleted == 0)
    for row in conn.execute(query):
        if row.uuid:
            state.migrations[row.uuid] = (row.instance_uuid, row.status)


def _instance(row: Any, cell_uuid: str) -> Instance:
    return Instance(
        uuid=row.uuid,
        cell=cell_uuid,
        project=row.project_id,
        vm_state=row.vm_state,
        task_state=row.task_state,
        host=row.host,
        node=row.node,
        vcpus=int(row.vcpus or 0),
        memory_mb=int(row.memory_mb or 0),
        deleted=bool(row.deleted),
    )


def read_allocations(placement_db_url: str) -> dict[str, dict[str, dict[str, int]]]:
    """consumer uuid -> provider name -> resource class -> amount, from Placement's tables."""
    meta = sa.MetaData()
    found: dict[str, dict[str, dict[str, int]]] = {}
    with _engine(placement_db_url) as engine, engine.connect() as conn:
        meta.reflect(conn, only=("allocations", "resource_providers", "resource_classes"))
        alloc = meta.tables["allocations"]
        rps, rcs = meta.tables["resource_providers"], meta.tables["resource_classes"]
        query = (
            sa.select(alloc.c.consumer_id, rps.c.name, rcs.c.name.label("rc"), alloc.c.used)
            .join(rps, rps.c.id == alloc.c.resource_provider_id)
            .join(rcs, rcs.c.id == alloc.c.resource_class_id)
        )
        for row in conn.execute(query):
            by_rp = found.setdefault(row.consumer_id, {}).setdefault(row.name, {})
            by_rp[row.rc] = by_rp.get(row.rc, 0) + int(row.used)
    return found


def read_empty_consumers(placement_db_url: str) -> set[str]:
    """Placement consumers without allocations (normally removed with their last one)."""
    query = sa.text(
        "SELECT uuid FROM consumers WHERE NOT EXISTS "
        "(SELECT 1 FROM allocations WHERE allocations.consumer_id = consumers.uuid)"
    )
    with _engine(placement_db_url) as engine, engine.connect() as conn:
        return set(conn.execute(query).scalars())


# --- API state ------------------------------------------------------------------------------


@dataclass
class ApiState:
    listed: dict[str, dict[str, Any]] = field(default_factory=dict)  # uuid -> list entry
    shown: dict[str, dict[str, Any] | None] = field(default_factory=dict)  # None: 404
    quota_in_use: dict[str, dict[str, int]] = field(default_factory=dict)
    limits_used: dict[str, dict[str, int]] = field(default_factory=dict)


def list_servers(api: httpx.Client) -> dict[str, dict[str, Any]]:
    """Every server of every project, as ``servers/detail?all_tenants=1`` shows it (paged)."""
    found: dict[str, dict[str, Any]] = {}
    marker = ""
    while True:
        query = f"/v2.1/servers/detail?all_tenants=1&limit=200{marker}"
        page = api.get(query, headers=ADMIN)
        page.raise_for_status()
        servers = page.json()["servers"]
        found.update({s["id"]: s for s in servers})
        if len(servers) < 200:
            return found
        marker = f"&marker={servers[-1]['id']}"


def read_api(api: httpx.Client, projects: Iterable[str], also: Iterable[str] = ()) -> ApiState:
    """The list, a GET of each listed server (and of ``also``), usage per project."""
    state = ApiState(listed=list_servers(api))
    for uuid in sorted({*state.listed, *also}):
        shown = api.get(f"/v2.1/servers/{uuid}", headers=ADMIN)
        if shown.status_code not in (200, 404):
            shown.raise_for_status()
        state.shown[uuid] = shown.json()["server"] if shown.status_code == 200 else None
    for project in sorted(set(projects)):
        detail = api.get(f"/v2.1/os-quota-sets/{project}/detail", headers=ADMIN)
        detail.raise_for_status()
        body = detail.json()["quota_set"]
        state.quota_in_use[project] = {r: body[r]["in_use"] for r in ("instances", "cores", "ram")}
        limits = api.get(f"/v2.1/limits?tenant_id={project}", headers=ADMIN)
        limits.raise_for_status()
        absolute = limits.json()["limits"]["absolute"]
        state.limits_used[project] = {
            "instances": absolute["totalInstancesUsed"],
            "cores": absolute["totalCoresUsed"],
            "ram": absolute["totalRAMUsed"],
        }
    return state


def is_transitional(server: dict[str, Any]) -> bool:
    return server["status"] == "BUILD" or server.get("OS-EXT-STS:task_state") is not None
