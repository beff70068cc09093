"""SQL of the quota engine: limits in the API DB, usage counts in the API and cell DBs, claim locks.

Called by ``openkeel.api.usecases.quotas`` only; every function takes an open connection so the
caller decides the transaction (a claim counts and inserts in one transaction).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from openkeel.db.schema import api as api_tables
from openkeel.db.schema import cell as cell_tables

_quotas = api_tables.quotas
_user_quotas = api_tables.project_user_quotas
_classes = api_tables.quota_classes
_lock_rows = api_tables.quota_usages


# Statements of the hot paths (every quota claim) are built once: building and cache-keying a
# statement costs more than running it.
def _layer(number: int, table: sa.Table, *where: sa.ColumnElement[bool]) -> sa.Select[Any]:
    return sa.select(
        sa.literal_column(str(number)).label("layer"),
        table.c.id,
        table.c.resource,
        table.c.hard_limit,
    ).where(*where)


_CLASS_LAYER = _layer(0, _classes, _classes.c.class_name == sa.bindparam("class_name"))
_PROJECT_LAYER = _layer(1, _quotas, _quotas.c.project_id == sa.bindparam("project_id"))
_USER_LAYER = _layer(
    2,
    _user_quotas,
    _user_quotas.c.project_id == sa.bindparam("project_id"),
    _user_quotas.c.user_id == sa.bindparam("user_id"),
)
# Without a user / with one: the layers in the order they override each other.
_LAYERS_SQL = (
    sa.union_all(_CLASS_LAYER, _PROJECT_LAYER).order_by("layer", "id"),
    sa.union_all(_CLASS_LAYER, _PROJECT_LAYER, _USER_LAYER).order_by("layer", "id"),
)


def limit_layers(
    conn: sa.Connection, class_name: str, project_id: str, user_id: str | None
) -> tuple[dict[str, int], dict[str, int], dict[str, int]]:
    """(class limits, project limits, user limits) in one query; no user: an empty dict."""
    params = {"class_name": class_name, "project_id": project_id, "user_id": user_id}
    layers: tuple[dict[str, int], dict[str, int], dict[str, int]] = ({}, {}, {})
    query = _LAYERS_SQL[user_id is not None]
    for layer, _id, resource, limit in conn.execute(query, params):
        if limit is not None:
            layers[layer][resource] = limit
    return layers


def _limits(conn: sa.Connection, query: sa.Select[tuple[str, int | None]]) -> dict[str, int]:
    return {resource: limit for resource, limit in conn.execute(query) if limit is not None}


def project_limits(conn: sa.Connection, project_id: str) -> dict[str, int]:
    """The project's own limits (``quotas`` rows) by resource."""
    query = sa.select(_quotas.c.resource, _quotas.c.hard_limit).where(
        _quotas.c.project_id == project_id
    )
    return _limits(conn, query)


def user_limits(conn: sa.Connection, project_id: str, user_id: str) -> dict[str, int]:
    """The user's own limits in the project (``project_user_quotas`` rows) by resource."""
    query = sa.select(_user_quotas.c.resource, _user_quotas.c.hard_limit).where(
        _user_quotas.c.project_id == project_id, _user_quotas.c.user_id == user_id
    )
    return _limits(conn, query)


def user_limit_totals(conn: sa.Connection, project_id: str) -> dict[str, int]:
    """The sum of every user's limit in the project, by resource (Nova's "remains" input)."""
    query = (
        sa.select(_user_quotas.c.resource, sa.func.sum(_user_quotas.c.hard_limit))
        .where(_user_quotas.c.project_id == project_id)
        .group_by(_user_quotas.c.resource)
    )
    return {resource: int(total) for resource, total in conn.execute(query) if total is not None}


def class_limits(conn: sa.Connection, class_name: str) -> dict[str, int]:
    """The limits of a quota class (``default`` is the one Nova applies) by resource."""
    query = sa.select(_classes.c.resource, _classes.c.hard_limit).where(
        _classes.c.class_name == class_name
    )
    return _limits(conn, query)


def set_project_limit(conn: sa.Connection, project_id: str, resource: str, limit: int) -> None:
    """Create or update the project's limit for ``resource``."""
    where = (_quotas.c.project_id == project_id, _quotas.c.resource == resource)
    updated = conn.execute(sa.update(_quotas).where(*where).values(hard_limit=limit))
    if updated.rowcount == 0:
        conn.execute(
            sa.insert(_quotas).values(project_id=project_id, resource=resource, hard_limit=limit)
        )


def set_user_limit(
    conn: sa.Connection, project_id: str, user_id: str, resource: str, limit: int
) -> None:
    """Create or update the user's limit in the project for ``resource``."""
    where = (
        _user_quotas.c.project_id == project_id,
        _user_quotas.c.user_id == user_id,
        _user_quotas.c.resource == resource,
    )
    updated = conn.execute(sa.update(_user_quotas).where(*where).values(hard_limit=limit))
    if updated.rowcount == 0:
        conn.execute(
            sa.insert(_user_quotas).values(
                project_id=project_id, user_id=user_id, resource=resource, hard_limit=limit
            )
        )


def set_class_limit(conn: sa.Connection, class_name: str, resource: str, limit: int) -> None:
    """Create or update a quota class's limit for ``resource``."""
    where = (_classes.c.class_name == class_name, _classes.c.resource == resource)
    updated = conn.execute(sa.update(_classes).where(*where).values(hard_limit=limit))
    if updated.rowcount == 0:
        conn.execute(
            sa.insert(_classes).values(class_name=class_name, resource=resource, hard_limit=limit)
        )


def delete_project_limits(conn: sa.Connection, project_id: str) -> None:
    """Drop every limit of the project and of its users (back to the defaults)."""
    conn.execute(sa.delete(_user_quotas).where(_user_quotas.c.project_id == project_id))
    conn.execute(sa.delete(_quotas).where(_quotas.c.project_id == project_id))


def delete_user_limits(conn: sa.Connection, project_id: str, user_id: str) -> None:
    """Drop every limit of one user in the project."""
    conn.execute(
        sa.delete(_user_quotas).where(
            _user_quotas.c.project_id == project_id, _user_quotas.c.user_id == user_id
        )
    )


@dataclass(frozen=True)
class Scoped:
    """A usage count for the project and, when asked for, for one user in it."""

    project: dict[str, int]
    user: dict[str, int]


def count_key_pairs(conn: sa.Connection, user_id: str) -> int:
    """Key pairs of the user (key pairs belong to users, not projects)."""
    table = api_tables.key_pairs
    query = sa.select(sa.func.count()).select_from(table).where(table.c.user_id == user_id)
    return int(conn.execute(query).scalar_one())


def count_server_groups(conn: sa.Connection, project_id: str, user_id: str | None) -> Scoped:
    """Server groups of the project and of the user in it."""
    table = api_tables.instance_groups
    query = sa.select(sa.func.count()).select_from(table).where(table.c.project_id == project_id)
    project = {"server_groups": int(conn.execute(query).scalar_one())}
    user: dict[str, int] = {}
    if user_id is not None:
        mine = query.where(table.c.user_id == user_id)
        user = {"server_groups": int(conn.execute(mine).scalar_one())}
    return Scoped(project, user)


def count_group_members(conn: sa.Connection, group_uuid: str, user_id: str) -> int:
    """Live servers of the user in the server group (through their instance mappings)."""
    groups, members = api_tables.instance_groups, api_tables.instance_group_member
    mappings = api_tables.instance_mappings
    query = (
        sa.select(sa.func.count(sa.distinct(mappings.c.instance_uuid)))
        .select_from(
            members.join(groups, groups.c.id == members.c.group_id).join(
                mappings, mappings.c.instance_uuid == members.c.instance_uuid
            )
        )
        .where(
            groups.c.uuid == group_uuid,
            mappings.c.user_id == user_id,
            sa.or_(mappings.c.queued_for_delete.is_(None), mappings.c.queued_for_delete.is_(False)),
        )
    )
    return int(conn.execute(query).scalar_one())


_INST = cell_tables.instances
_COUNTED_INSTANCES = (
    _INST.c.deleted == 0,
    _INST.c.project_id == sa.bindparam("project_id"),
    sa.or_(_INST.c.vm_state.is_(None), _INST.c.vm_state != "soft-delete"),
    sa.or_(_INST.c.hidden.is_(None), _INST.c.hidden.is_(False)),
)
_MINE = _INST.c.user_id == sa.bindparam("user_id")
_COUNT_INSTANCES_SQL = (
    sa.select(
        sa.func.count(_INST.c.id), sa.func.sum(_INST.c.vcpus), sa.func.sum(_INST.c.memory_mb)
    ).where(*_COUNTED_INSTANCES),
    # The user's share in the same scan: rows of other users add NULL, which SUM skips.
    sa.select(
        sa.func.count(_INST.c.id),
        sa.func.sum(_INST.c.vcpus),
        sa.func.sum(_INST.c.memory_mb),
        sa.func.count(sa.case((_MINE, _INST.c.id))),
        sa.func.sum(sa.case((_MINE, _INST.c.vcpus))),
        sa.func.sum(sa.case((_MINE, _INST.c.memory_mb))),
    ).where(*_COUNTED_INSTANCES),
)


def count_instances(conn: sa.Connection, project_id: str, user_id: str | None) -> Scoped:
    """Instances, cores and ram of the project (and user) in one cell database.

    Soft-deleted (``SOFT_DELETED`` vm_state) and hidden copies do not count, as in Nova.
    """
    query = _COUNT_INSTANCES_SQL[bool(user_id)]
    row = conn.execute(query, {"project_id": project_id, "user_id": user_id}).one()
    project = _counts(row[0], row[1], row[2])
    user = _counts(row[3], row[4], row[5]) if user_id else {}
    return Scoped(project, user)


def _counts(count: int | None, cores: int | None, ram: int | None) -> dict[str, int]:
    return {"instances": int(count or 0), "cores": int(cores or 0), "ram": int(ram or 0)}


_UNSCHEDULED_SQL = (
    sa.select(api_tables.build_requests.c.instance)
    .join(
        api_tables.instance_mappings,
        api_tables.instance_mappings.c.instance_uuid == api_tables.build_requests.c.instance_uuid,
    )
    .where(
        api_tables.build_requests.c.project_id == sa.bindparam("project_id"),
        api_tables.instance_mappings.c.cell_id.is_(None),
    )
)


def count_unscheduled(conn: sa.Connection, project_id: str, user_id: str | None) -> Scoped:
    """Instances, cores and ram of build requests not yet placed in a cell (API DB).

    A server counts from the moment ``POST /servers`` commits its build request, so a quota
    claim sees servers still being scheduled. Once the conductor maps it to a cell it is
    counted there instead (during that short hand-over it may count twice: the safe side).
    """
    project = {"instances": 0, "cores": 0, "ram": 0}
    user = dict(project) if user_id else {}
    for (blob,) in conn.execute(_UNSCHEDULED_SQL, {"project_id": project_id}):
        owner, cores, ram = _build_usage(blob or "{}")
        counted = {"instances": 1, "cores": cores, "ram": ram}
        for key, value in counted.items():
            project[key] += value
            if user_id and owner == user_id:
                user[key] += value
    return Scoped(project, user)


@functools.lru_cache(maxsize=256)
def _build_usage(blob: str) -> tuple[Any, int, int]:
    """(user id, cores, ram) of a serialized build request instance. Cached by its text: every
    claim of a busy project reads the same pending build requests again."""
    instance = json.loads(blob)
    flavor = instance.get("flavor") or {}
    return instance.get("user_id"), int(flavor.get("vcpus") or 0), int(flavor.get("memory_mb") or 0)


# --- claim locks -------------------------------------------------------------------------------
# Nova's reservation-era ``quota_usages`` table is no longer read by anyone, so its rows serve as
# lock rows: one per (project, user, resource) scope. ``ensure_lock_rows`` creates them in their
# own committed transaction (duplicates from a race are harmless); ``lock`` then takes the row
# with the smallest id FOR UPDATE inside the claim's transaction, so every claimant of a scope
# queues on the same committed row. SQLite has no row locks: its engine begins every transaction
# IMMEDIATE, which serializes writers on the whole database instead.

LockKey = tuple[str, str, str]
"""(project_id or "", user_id or "", resource)."""


_LOCK_FILTER = (
    _lock_rows.c.project_id == sa.bindparam("project_id"),
    _lock_rows.c.user_id == sa.bindparam("user_id"),
    _lock_rows.c.resource == sa.bindparam("resource"),
)
_LOCK_EXISTS_SQL = sa.select(_lock_rows.c.id).where(*_LOCK_FILTER).limit(1)
_LOCK_INSERT_SQL = sa.insert(_lock_rows).values(in_use=0, reserved=0)
_LOCK_SQL = (
    sa.select(_lock_rows.c.id)
    .where(*_LOCK_FILTER)
    .order_by(_lock_rows.c.id)
    .limit(1)
    .with_for_update()
)


def _lock_params(key: LockKey) -> dict[str, str]:
    project_id, user_id, resource = key
    return {"project_id": project_id, "user_id": user_id, "resource": resource}


def ensure_lock_rows(engine: sa.Engine, keys: Iterable[LockKey]) -> None:
    """Make sure a committed lock row exists for each key."""
    with engine.begin() as conn:
        for key in keys:
            params = _lock_params(key)
            if conn.execute(_LOCK_EXISTS_SQL, params).first() is None:
                conn.execute(_LOCK_INSERT_SQL, params)


def lock(conn: sa.Connection, key: LockKey) -> bool:
    """Block until this transaction holds the lock row of ``key``; False if it has none yet
    (``ensure_lock_rows`` first)."""
    return conn.execute(_LOCK_SQL, _lock_params(key)).first() is not None
