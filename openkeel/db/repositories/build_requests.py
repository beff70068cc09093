"""SQL for build requests (API DB ``build_requests``): servers accepted but not yet in a cell.

The servers API inserts one (with the serialized ``Instance``) inside its quota claim, so
``GET /servers`` can show the BUILD server and quota counts it; conductor deletes it once the
instance row exists in a cell (if it is already gone, the user deleted the server meanwhile).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from openkeel.db.schema import api as api_schema
from openkeel.db.schema.columns import utcnow
from openkeel.domain.instances import BuildRequestNotFound, Instance

_B = api_schema.build_requests


@dataclass(frozen=True)
class BuildRequest:
    instance_uuid: str
    project_id: str
    instance: Instance
    block_device_mappings: tuple[Mapping[str, Any], ...] = ()
    tags: tuple[str, ...] = ()
    created_at: datetime | None = None


def _build_request(row: sa.RowMapping) -> BuildRequest:
    instance = Instance.from_primitive(json.loads(row["instance"]))
    return BuildRequest(
        instance_uuid=row["instance_uuid"],
        project_id=row["project_id"],
        instance=instance,
        block_device_mappings=tuple(json.loads(row["block_device_mappings"] or "[]")),
        tags=tuple(json.loads(row["tags"] or "[]")),
        created_at=row["created_at"],
    )


_INSERT_SQL = sa.insert(_B)
_GET_SQL = sa.select(_B).where(_B.c.instance_uuid == sa.bindparam("uuid"))
_DELETE_SQL = sa.delete(_B).where(_B.c.instance_uuid == sa.bindparam("uuid"))


def create(
    conn: sa.Connection,
    instance: Instance,
    *,
    block_device_mappings: Sequence[Mapping[str, Any]] = (),
    tags: Sequence[str] | None = None,
) -> BuildRequest:
    """Insert the build request of ``instance`` (its ``created_at`` is the request's)."""
    now = instance.created_at or utcnow()
    stored = Instance.from_primitive({**instance.to_primitive(), "created_at": now.isoformat()})
    conn.execute(
        _INSERT_SQL,
        _row(stored.to_primitive(), instance, now, block_device_mappings, tags),
    )
    return get(conn, instance.uuid)


def add(
    conn: sa.Connection,
    instances: Sequence[Instance],
    *,
    block_device_mappings: Sequence[Mapping[str, Any]] = (),
    tags: Sequence[str] | None = None,
) -> list[dict[str, Any]]:
    """Insert the build requests of ``instances`` (whole instances, as the servers API builds
    them) in one statement; returns each instance's stored primitive. ``create`` for one
    that also reads it back."""
    rows = []
    stored = []
    for instance in instances:
        now = instance.created_at or utcnow()
        primitive = instance.to_primitive()
        primitive["created_at"] = now.isoformat()
        stored.append(primitive)
        rows.append(_row(primitive, instance, now, block_device_mappings, tags))
    if rows:
        conn.execute(_INSERT_SQL, rows)
    return stored


def _row(
    primitive: Mapping[str, Any],
    instance: Instance,
    now: datetime,
    block_device_mappings: Sequence[Mapping[str, Any]],
    tags: Sequence[str] | None,
) -> dict[str, Any]:
    return {
        "instance_uuid": instance.uuid,
        "project_id": instance.project_id,
        "instance": json.dumps(primitive),
        "block_device_mappings": json.dumps([dict(b) for b in block_device_mappings]),
        "tags": json.dumps(list(instance.tags if tags is None else tags)),
        "created_at": now,
    }


def get(conn: sa.Connection, instance_uuid: str) -> BuildRequest:
    """The build request; ``BuildRequestNotFound`` (404) if none."""
    found = conn.execute(_GET_SQL, {"uuid": instance_uuid}).mappings().first()
    if found is None:
        raise BuildRequestNotFound(instance_uuid)
    return _build_request(found)


def find(conn: sa.Connection, instance_uuid: str) -> BuildRequest | None:
    try:
        return get(conn, instance_uuid)
    except BuildRequestNotFound:
        return None


def update_instance(conn: sa.Connection, instance: Instance) -> None:
    """Rewrite the serialized instance (e.g. a rename before scheduling finished)."""
    result = conn.execute(
        sa.update(_B)
        .where(_B.c.instance_uuid == instance.uuid)
        .values(instance=json.dumps(instance.to_primitive()), updated_at=utcnow())
    )
    if result.rowcount == 0:
        raise BuildRequestNotFound(instance.uuid)


def delete(conn: sa.Connection, instance_uuid: str) -> None:
    """Delete it; ``BuildRequestNotFound`` if it was already gone (someone else won)."""
    result = conn.execute(_DELETE_SQL, {"uuid": instance_uuid})
    if result.rowcount == 0:
        raise BuildRequestNotFound(instance_uuid)


def list_build_requests(conn: sa.Connection, project_id: str | None = None) -> list[BuildRequest]:
    """Build requests of a project (all projects with None), newest first."""
    query = sa.select(_B)
    if project_id is not None:
        query = query.where(_B.c.project_id == project_id)
    query = query.order_by(_B.c.created_at.desc(), _B.c.id.desc())
    return [_build_request(row) for row in conn.execute(query).mappings()]


def created_before(conn: sa.Connection, cutoff: datetime) -> list[BuildRequest]:
    """Build requests older than ``cutoff``, oldest first (the conductor's orphan sweep)."""
    query = sa.select(_B).where(_B.c.created_at < cutoff).order_by(_B.c.created_at, _B.c.id)
    return [_build_request(row) for row in conn.execute(query).mappings()]


def count_usage(
    conn: sa.Connection, project_id: str, user_id: str | None = None
) -> tuple[dict[str, int], dict[str, int]]:
    """Instances, cores and ram the project's (and user's) build requests hold."""
    project = {"instances": 0, "cores": 0, "ram": 0}
    user = dict(project)
    for request in list_build_requests(conn, project_id):
        flavor = request.instance.flavor
        scopes = [project] + ([user] if request.instance.user_id == user_id else [])
        for scope in scopes:
            scope["instances"] += 1
            scope["cores"] += flavor.vcpus
            scope["ram"] += flavor.memory_mb
    return project, user if user_id else {}
