"""SQL for instances in a cell DB: create, get, compare-and-swap update, soft delete, metadata,
tags and quota counts.

Used by conductor (creates the row in the chosen cell or cell0), compute (state transitions
with ``expected_task_state``), and the servers API (show, metadata and tag APIs). Listing lives
in ``instance_list``; row decoding and batch loading in ``instance_rows``. Functions take a
``Connection`` so callers compose them in one transaction; ``InstanceRepository`` wraps an
engine for callers that want one transaction per call.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from openkeel.db.repositories import instance_rows as rows
from openkeel.db.schema import cell as cell_schema
from openkeel.db.schema.columns import utcnow
from openkeel.db.softdelete import ReadDeleted, read_deleted_clause
from openkeel.domain.instances import (
    EXTRA_FIELDS,
    RELATED_FIELDS,
    UNSET,
    FlavorSnapshot,
    Instance,
    InstanceNotFound,
    InstanceUpdate,
    InstanceUpdateConflict,
    UnexpectedDeletingTaskStateError,
    UnexpectedTaskStateError,
    _Unset,
)

INST = rows.INST
ExpectedState = str | None | Sequence[str | None] | _Unset
"""An expected state: one value, several (any matches), None for NULL, UNSET for "don't care"."""

_INSERT_SKIP = frozenset({"id", "updated_at", "deleted_at"})

# Tables soft-deleted with the instance (as Nova's instance_destroy does).
_DESTROY_WITH = (
    cell_schema.security_group_instance_association,
    cell_schema.instance_info_caches,
    cell_schema.instance_metadata,
    cell_schema.instance_faults,
    cell_schema.instance_extra,
    cell_schema.instance_system_metadata,
    cell_schema.block_device_mapping,
    cell_schema.migrations,
    cell_schema.virtual_interfaces,
)


def _flavor_columns(flavor: FlavorSnapshot) -> dict[str, Any]:
    return {
        "memory_mb": flavor.memory_mb,
        "vcpus": flavor.vcpus,
        "root_gb": flavor.root_gb,
        "ephemeral_gb": flavor.ephemeral_gb,
        "instance_type_id": flavor.id,
    }


def _certs_json(certs: tuple[str, ...] | None) -> str | None:
    return json.dumps({"ids": list(certs)}) if certs else None


def create(conn: sa.Connection, instance: Instance) -> Instance:
    """Insert the instance and its extra, info cache, metadata, tags and security groups."""
    now = utcnow()
    values = {name: getattr(instance, name) for name in rows.PLAIN_COLUMNS + rows.BOOL_COLUMNS}
    values = {k: v for k, v in values.items() if k not in _INSERT_SKIP}
    values.update(_flavor_columns(instance.flavor))
    values.update(
        project_id=instance.project_id,
        user_id=instance.user_id,
        created_at=instance.created_at or now,
        deleted=0,
    )
    conn.execute(sa.insert(INST).values(values))
    stamp = {"created_at": now, "deleted": 0}
    flavor = rows.flavors_to_json(instance.flavor, instance.old_flavor, instance.new_flavor)
    conn.execute(
        sa.insert(rows.EXTRA).values(
            instance_uuid=instance.uuid,
            flavor=flavor,
            trusted_certs=_certs_json(instance.trusted_certs),
            **stamp,
        )
    )
    conn.execute(
        sa.insert(rows.CACHE).values(
            instance_uuid=instance.uuid,
            network_info=json.dumps(list(instance.network_info)),
            **stamp,
        )
    )
    _insert_key_values(conn, rows.META, instance.uuid, instance.metadata, now)
    _insert_key_values(conn, rows.SYSMETA, instance.uuid, instance.system_metadata, now)
    if instance.tags:
        conn.execute(
            sa.insert(rows.TAGS), [{"resource_id": instance.uuid, "tag": t} for t in instance.tags]
        )
    _add_security_groups(conn, instance, now)
    return get(conn, instance.uuid)


def _insert_key_values(
    conn: sa.Connection, table: sa.Table, uuid: str, items: Mapping[str, str], now: Any
) -> None:
    if items:
        conn.execute(
            sa.insert(table),
            [
                {"instance_uuid": uuid, "key": k, "value": v, "created_at": now, "deleted": 0}
                for k, v in items.items()
            ],
        )


def _add_security_groups(conn: sa.Connection, instance: Instance, now: Any) -> None:
    """Associate the named groups of the instance's project (created when missing)."""
    for name in dict.fromkeys(instance.security_groups):
        query = sa.select(rows.SG.c.id).where(
            rows.SG.c.project_id == instance.project_id,
            rows.SG.c.name == name,
            rows.SG.c.deleted == 0,
        )
        group_id = conn.execute(query).scalar()
        if group_id is None:
            group_id = _create_security_group(conn, instance, name, now, query)
        conn.execute(
            sa.insert(rows.SG_ASSOC).values(
                security_group_id=group_id, instance_uuid=instance.uuid, created_at=now, deleted=0
            )
        )


def set_security_groups(conn: sa.Connection, instance: Instance, names: tuple[str, ...]) -> None:
    """The instance's associated group names become ``names`` (after the network service
    changed its ports' groups: the servers view shows these)."""
    now = datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
    conn.execute(
        sa.update(rows.SG_ASSOC)
        .where(rows.SG_ASSOC.c.instance_uuid == instance.uuid, rows.SG_ASSOC.c.deleted == 0)
        .values(deleted=rows.SG_ASSOC.c.id, deleted_at=now)
    )
    _add_security_groups(conn, dataclasses.replace(instance, security_groups=names), now)


def _create_security_group(
    conn: sa.Connection, instance: Instance, name: str, now: Any, query: sa.Select[Any]
) -> Any:
    """Insert the group; if another build of the project inserted it first (PostgreSQL,
    MariaDB: both found none), use theirs. The savepoint keeps this transaction usable; the
    locking read sees their commit even under MariaDB's REPEATABLE READ snapshot."""
    values = {"name": name, "description": name, "project_id": instance.project_id,
              "user_id": instance.user_id, "created_at": now, "deleted": 0}  # fmt: skip
    try:
        with conn.begin_nested():
            result = conn.execute(sa.insert(rows.SG).values(**values))
    except sa.exc.IntegrityError:
        return conn.execute(query.with_for_update(read=True)).scalar_one()
    return result.inserted_primary_key[0]  # type: ignore[index]


_GET_SQL = {
    mode: rows.base_select().where(
        INST.c.uuid == sa.bindparam("uuid"), read_deleted_clause(INST, mode)
    )
    for mode in ("no", "yes", "only")
}


def get(
    conn: sa.Connection,
    uuid: str,
    *,
    read_deleted: ReadDeleted = "no",
    relations: frozenset[str] = rows.RELATIONS,
) -> Instance:
    """The instance with its ``relations`` (default: all); ``InstanceNotFound`` (404) if not
    visible."""
    row = conn.execute(_GET_SQL[read_deleted], {"uuid": uuid}).mappings().first()
    if row is None:
        raise InstanceNotFound(uuid)
    return rows.build_instances(conn, [row], relations)[0]


def exists(conn: sa.Connection, uuid: str) -> bool:
    query = sa.select(INST.c.id).where(INST.c.uuid == uuid, INST.c.deleted == 0)
    return conn.execute(query).first() is not None


def uuids_in_states(
    conn: sa.Connection, vm_states: Sequence[str], created_before: Any
) -> list[str]:
    """Uuids of live instances in one of ``vm_states`` created before ``created_before``
    (the conductor's sweep for rows whose build no role owns any more)."""
    query = sa.select(INST.c.uuid).where(
        INST.c.deleted == 0,
        INST.c.vm_state.in_(list(vm_states)),
        INST.c.created_at < created_before,
    )
    return list(conn.execute(query).scalars())


def building_on_hosts(conn: sa.Connection, unchanged_since: Any) -> list[tuple[str, str]]:
    """(uuid, host) of live instances still building on a host and unchanged since
    ``unchanged_since`` (the conductor's sweep for builds whose host went away)."""
    stamp = sa.func.coalesce(INST.c.updated_at, INST.c.created_at)
    query = sa.select(INST.c.uuid, INST.c.host).where(
        INST.c.deleted == 0,
        INST.c.vm_state == "building",
        INST.c.host.is_not(None),
        stamp < unchanged_since,
    )
    return [(uuid, host) for uuid, host in conn.execute(query)]


def _expected_list(value: ExpectedState) -> list[str | None]:
    if value is None or isinstance(value, str):
        return [value]
    return list(value)  # type: ignore[arg-type]


def _state_clause(column: sa.Column[Any], allowed: list[str | None]) -> sa.ColumnElement[bool]:
    values = [v for v in allowed if v is not None]
    clauses: list[sa.ColumnElement[bool]] = []
    if values:
        clauses.append(column.in_(values))
    if None in allowed:
        clauses.append(column.is_(None))
    return sa.or_(*clauses) if clauses else sa.false()


def apply(
    conn: sa.Connection,
    uuid: str,
    changes: InstanceUpdate,
    *,
    expected_task_state: ExpectedState = UNSET,
    expected_vm_state: ExpectedState = UNSET,
    now: datetime.datetime | None = None,
) -> None:
    """Apply ``changes`` if the row still has the expected states (compare-and-swap).
    ``now``: the ``updated_at`` to stamp (the caller's clock; the wall clock by default).

    Raises ``UnexpectedTaskStateError`` (``UnexpectedDeletingTaskStateError`` when the actual
    task state is ``deleting``), ``InstanceUpdateConflict`` for a vm_state mismatch, or
    ``InstanceNotFound``. ``update`` does the same and reads the instance back.
    """
    expected: dict[str, list[str | None]] = {}
    if expected_task_state is not UNSET:
        expected["task_state"] = _expected_list(expected_task_state)
    if expected_vm_state is not UNSET:
        expected["vm_state"] = _expected_list(expected_vm_state)
    values = changes.changes()
    columns = {k: v for k, v in values.items() if k not in EXTRA_FIELDS | RELATED_FIELDS}
    if "flavor" in values:
        columns.update(_flavor_columns(values["flavor"]))
    columns["updated_at"] = now or utcnow()
    where = [INST.c.uuid == uuid, INST.c.deleted == 0]
    where += [_state_clause(INST.c[name], allowed) for name, allowed in expected.items()]
    if conn.execute(sa.update(INST).where(*where).values(columns)).rowcount == 0:
        _raise_conflict(conn, uuid, expected)
    now = columns["updated_at"]
    _update_extra(conn, uuid, values, now)
    if "metadata" in values:
        replace_key_values(conn, rows.META, uuid, values["metadata"], now)
    if "system_metadata" in values:
        replace_key_values(conn, rows.SYSMETA, uuid, values["system_metadata"], now)
    if "network_info" in values:
        set_network_info(conn, uuid, values["network_info"])


def update(
    conn: sa.Connection,
    uuid: str,
    changes: InstanceUpdate,
    *,
    expected_task_state: ExpectedState = UNSET,
    expected_vm_state: ExpectedState = UNSET,
    now: datetime.datetime | None = None,
) -> Instance:
    """``apply`` the changes, then return the updated instance."""
    apply(
        conn,
        uuid,
        changes,
        expected_task_state=expected_task_state,
        expected_vm_state=expected_vm_state,
        now=now,
    )
    return get(conn, uuid)


def _raise_conflict(conn: sa.Connection, uuid: str, expected: dict[str, list[str | None]]) -> None:
    # A locking (current) read: under REPEATABLE READ a plain SELECT could show the snapshot.
    query = sa.select(INST.c.task_state, INST.c.vm_state).where(
        INST.c.uuid == uuid, INST.c.deleted == 0
    )
    row = conn.execute(query.with_for_update()).mappings().first()
    if row is None:
        raise InstanceNotFound(uuid)
    wanted: dict[str, Any] = {}
    actual: dict[str, Any] = {}
    for name, allowed in expected.items():
        if row[name] not in allowed:
            wanted[name] = allowed
            actual[name] = row[name]
    if "task_state" in actual:
        if actual["task_state"] == "deleting":
            raise UnexpectedDeletingTaskStateError(uuid, wanted, actual)
        raise UnexpectedTaskStateError(uuid, wanted, actual)
    raise InstanceUpdateConflict(uuid, wanted, actual)


def _update_extra(
    conn: sa.Connection, uuid: str, values: Mapping[str, Any], now: datetime.datetime
) -> None:
    if not EXTRA_FIELDS & values.keys():
        return
    extra = rows.EXTRA
    current = conn.execute(
        sa.select(extra.c.flavor).where(extra.c.instance_uuid == uuid, extra.c.deleted == 0)
    ).scalar()
    flavors = rows.flavors_from_json(current)
    set_values: dict[str, Any] = {"updated_at": now}
    if {"flavor", "old_flavor", "new_flavor"} & values.keys():
        cur = values.get("flavor") or flavors["cur"]
        if cur is None:
            raise ValueError(f"Instance {uuid} has no flavor to keep")
        old = values["old_flavor"] if "old_flavor" in values else flavors["old"]
        new = values["new_flavor"] if "new_flavor" in values else flavors["new"]
        set_values["flavor"] = rows.flavors_to_json(cur, old, new)
    if "trusted_certs" in values:
        set_values["trusted_certs"] = _certs_json(values["trusted_certs"])
    conn.execute(
        sa.update(extra)
        .where(extra.c.instance_uuid == uuid, extra.c.deleted == 0)
        .values(set_values)
    )


def replace_key_values(
    conn: sa.Connection, table: sa.Table, uuid: str, wanted: Mapping[str, str], now: Any
) -> None:
    """Make the live key/value rows equal ``wanted`` (soft-deleting removed keys)."""
    live = table.c.instance_uuid == uuid, table.c.deleted == 0
    query = sa.select(table.c.key, table.c.value).where(*live)
    current: dict[str, str] = {row.key: row.value for row in conn.execute(query)}
    gone = [k for k in current if k not in wanted]
    if gone:
        conn.execute(
            sa.update(table)
            .where(*live, table.c.key.in_(gone))
            .values(deleted=table.c.id, deleted_at=now)
        )
    for key, value in wanted.items():
        if key in current and current[key] != value:
            conn.execute(
                sa.update(table)
                .where(*live, table.c.key == key)
                .values(value=value, updated_at=now)
            )
    added = {k: v for k, v in wanted.items() if k not in current}
    _insert_key_values(conn, table, uuid, added, now)


def set_network_info(conn: sa.Connection, uuid: str, network_info: Iterable[Any]) -> None:
    """Replace the info cache (Nova's network model as JSON)."""
    cache = rows.CACHE
    text = json.dumps(list(network_info))
    result = conn.execute(
        sa.update(cache)
        .where(cache.c.instance_uuid == uuid)
        .values(network_info=text, updated_at=utcnow())
    )
    if result.rowcount == 0:
        conn.execute(
            sa.insert(cache).values(
                instance_uuid=uuid, network_info=text, created_at=utcnow(), deleted=0
            )
        )


def soft_delete(conn: sa.Connection, uuid: str) -> Instance:
    """Nova's ``instance_destroy``: ``deleted = id`` on the instance and its dependent rows.

    Tags are removed; actions and events stay (operators read them after deletion). Returns
    the deleted instance as ``read_deleted="yes"`` shows it.
    """
    now = utcnow()
    result = conn.execute(
        sa.update(INST)
        .where(INST.c.uuid == uuid, INST.c.deleted == 0)
        .values(deleted=INST.c.id, deleted_at=now, updated_at=INST.c.updated_at)
    )
    if result.rowcount == 0:
        raise InstanceNotFound(uuid)
    for table in _DESTROY_WITH:
        conn.execute(
            sa.update(table)
            .where(table.c.instance_uuid == uuid, table.c.deleted == 0)
            .values(deleted=table.c.id, deleted_at=now)
        )
    conn.execute(sa.delete(rows.TAGS).where(rows.TAGS.c.resource_id == uuid))
    tokens = cell_schema.console_auth_tokens
    conn.execute(sa.delete(tokens).where(tokens.c.instance_uuid == uuid))
    return get(conn, uuid, read_deleted="yes")


# --- quota counts ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Usage:
    """Instances, cores and ram of a project and of one user in it (in one cell)."""

    project: dict[str, int]
    user: dict[str, int]


def count_usage(conn: sa.Connection, project_id: str, user_id: str | None = None) -> Usage:
    """Live, not soft-deleted, not hidden instances and their vcpus/memory_mb sums."""
    query = sa.select(
        sa.func.count(INST.c.id), sa.func.sum(INST.c.vcpus), sa.func.sum(INST.c.memory_mb)
    )
    query = query.where(
        INST.c.deleted == 0,
        INST.c.project_id == project_id,
        sa.or_(INST.c.vm_state.is_(None), INST.c.vm_state != "soft-delete"),
        sa.or_(INST.c.hidden.is_(None), INST.c.hidden == sa.false()),
    )

    def counted(select: sa.Select[Any]) -> dict[str, int]:
        count, cores, ram = conn.execute(select).one()
        return {"instances": int(count or 0), "cores": int(cores or 0), "ram": int(ram or 0)}

    user = counted(query.where(INST.c.user_id == user_id)) if user_id else {}
    return Usage(counted(query), user)


def active_in_window(
    conn: sa.Connection,
    begin: Any,
    end: Any,
    project_id: str | None = None,
    host: str | None = None,
) -> list[tuple[Any, str]]:
    """(created_at, uuid) of the instances, deleted ones included, that ran during
    [``begin``, ``end``): launched before ``end`` and not terminated before ``begin`` (Nova's
    ``get_active_by_window_joined``), oldest first."""
    query = sa.select(INST.c.created_at, INST.c.uuid).where(
        INST.c.launched_at < end,
        sa.or_(INST.c.terminated_at.is_(None), INST.c.terminated_at > begin),
    )
    if project_id is not None:
        query = query.where(INST.c.project_id == project_id)
    if host is not None:
        query = query.where(INST.c.host == host)
    return [(row[0], row[1]) for row in conn.execute(query.order_by(INST.c.created_at, INST.c.id))]
