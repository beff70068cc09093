"""SQL of the quota engine: limits in the API DB, usage counts in the API and cell DBs, claim locks.

Called by ``openkeel.api.usecases.quotas`` only; every function takes an open connection so the
caller decides the transaction (a claim counts and inserts in one transaction).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

import sqlalchemy as sa

from openkeel.db.schema import api as api_tables
from openkeel.db.schema import cell as cell_tables

_quotas = api_tables.quotas
_user_quotas = api_tables.project_user_quotas
_classes = api_tables.quota_classes
_lock_rows = api_tables.quota_usages


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


def count_instances(conn: sa.Connection, project_id: str, user_id: str | None) -> Scoped:
    """Instances, cores and ram of the project (and user) in one cell database.

    Soft-deleted (``SOFT_DELETED`` vm_state) and hidden copies do not count, as in Nova.
    """
    table = cell_tables.instances
    query = sa.select(
        sa.func.count(table.c.id), sa.func.sum(table.c.vcpus), sa.func.sum(table.c.memory_mb)
    ).where(
        table.c.deleted == 0,
        table.c.project_id == project_id,
        sa.or_(table.c.vm_state.is_(None), table.c.vm_state != "soft-delete"),
        sa.or_(table.c.hidden.is_(None), table.c.hidden.is_(False)),
    )
    project = _instance_row(conn, query)
    user = _instance_row(conn, query.where(table.c.user_id == user_id)) if user_id else {}
    return Scoped(project, user)


def count_unscheduled(conn: sa.Connection, project_id: str, user_id: str | None) -> Scoped:
    """Instances, cores and ram of build requests not yet placed in a cell (API DB).

    A server counts from the moment ``POST /servers`` commits its build request, so a quota
    claim sees servers still being scheduled. Once the conductor maps it to a cell it is
    counted there instead (during that short hand-over it may count twice: the safe side).
    """
    requests = api_tables.build_requests
    mappings = api_tables.instance_mappings
    query = (
        sa.select(requests.c.instance)
        .join(mappings, mappings.c.instance_uuid == requests.c.instance_uuid)
        .where(requests.c.project_id == project_id, mappings.c.cell_id.is_(None))
    )
    project = {"instances": 0, "cores": 0, "ram": 0}
    user = dict(project) if user_id else {}
    for (blob,) in conn.execute(query):
        instance = json.loads(blob or "{}")
        flavor = instance.get("flavor") or {}
        counted = {"instances": 1, "cores": int(flavor.get("vcpus") or 0),
                   "ram": int(flavor.get("memory_mb") or 0)}  # fmt: skip
        for key, value in counted.items():
            project[key] += value
            if user_id and instance.get("user_id") == user_id:
                user[key] += value
    return Scoped(project, user)


def _instance_row(conn: sa.Connection, query: sa.Select[tuple[int, int, int]]) -> dict[str, int]:
    count, cores, ram = conn.execute(query).one()
    return {"instances": int(count or 0), "cores": int(cores or 0), "ram": int(ram or 0)}


# --- claim locks -------------------------------------------------------------------------------
# Nova's reservation-era ``quota_usages`` table is no longer read by anyone, so its rows serve as
# lock rows: one per (project, user, resource) scope. ``ensure_lock_rows`` creates them in their
# own committed transaction (duplicates from a race are harmless); ``lock`` then takes the row
# with the smallest id FOR UPDATE inside the claim's transaction, so every claimant of a scope
# queues on the same committed row. SQLite has no row locks: its engine begins every transaction
# IMMEDIATE, which serializes writers on the whole database instead.

LockKey = tuple[str, str, str]
"""(project_id or "", user_id or "", resource)."""


def _lock_filter(key: LockKey) -> tuple[sa.ColumnElement[bool], ...]:
    project_id, user_id, resource = key
    return (
        _lock_rows.c.project_id == project_id,
        _lock_rows.c.user_id == user_id,
        _lock_rows.c.resource == resource,
    )


def ensure_lock_rows(engine: sa.Engine, keys: Iterable[LockKey]) -> None:
    """Make sure a committed lock row exists for each key."""
    with engine.begin() as conn:
        for key in keys:
            exists = conn.execute(sa.select(_lock_rows.c.id).where(*_lock_filter(key)).limit(1))
            if exists.first() is None:
                project_id, user_id, resource = key
                conn.execute(
                    sa.insert(_lock_rows).values(
                        project_id=project_id,
                        user_id=user_id,
                        resource=resource,
                        in_use=0,
                        reserved=0,
                    )
                )


def lock(conn: sa.Connection, key: LockKey) -> None:
    """Block until this transaction holds the lock row of ``key``."""
    query = (
        sa.select(_lock_rows.c.id)
        .where(*_lock_filter(key))
        .order_by(_lock_rows.c.id)
        .limit(1)
        .with_for_update()
    )
    conn.execute(query).first()
