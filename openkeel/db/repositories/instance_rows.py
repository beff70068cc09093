"""Reading instances out of a cell DB: the joined SELECT, row → entity, batch loading.

Shared by ``instances`` (get) and ``instance_list`` (pages). One page costs a fixed number of
statements whatever its size: the instances with their ``instance_extra`` and info cache
(joined), then one query each for metadata, system metadata, tags, security groups and the
latest faults.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from openkeel.db.schema import cell as cell_schema
from openkeel.domain.instances import FlavorSnapshot, Instance, InstanceFault

INST = cell_schema.instances
EXTRA = cell_schema.instance_extra
CACHE = cell_schema.instance_info_caches
META = cell_schema.instance_metadata
SYSMETA = cell_schema.instance_system_metadata
TAGS = cell_schema.tags
FAULTS = cell_schema.instance_faults
SG = cell_schema.security_groups
SG_ASSOC = cell_schema.security_group_instance_association

# Instances columns copied to the entity as they are.
PLAIN_COLUMNS = (
    "id",
    "uuid",
    "display_name",
    "display_description",
    "hostname",
    "image_ref",
    "vm_state",
    "task_state",
    "power_state",
    "host",
    "node",
    "compute_id",
    "launched_on",
    "availability_zone",
    "key_name",
    "key_data",
    "user_data",
    "config_drive",
    "locked_by",
    "reservation_id",
    "launch_index",
    "progress",
    "access_ip_v4",
    "access_ip_v6",
    "root_device_name",
    "kernel_id",
    "ramdisk_id",
    "os_type",
    "architecture",
    "vm_mode",
    "default_ephemeral_device",
    "default_swap_device",
    "created_at",
    "updated_at",
    "launched_at",
    "terminated_at",
    "deleted_at",
)
BOOL_COLUMNS = (
    "locked",
    "auto_disk_config",
    "shutdown_terminate",
    "disable_terminate",
    "hidden",
)


def base_select() -> sa.Select[Any]:
    """Instances LEFT JOIN their extra (flavor, certs) and info cache (network_info)."""
    return sa.select(
        INST,
        EXTRA.c.flavor.label("extra_flavor"),
        EXTRA.c.trusted_certs.label("extra_trusted_certs"),
        CACHE.c.network_info.label("cache_network_info"),
    ).select_from(
        INST.outerjoin(EXTRA, EXTRA.c.instance_uuid == INST.c.uuid).outerjoin(
            CACHE, CACHE.c.instance_uuid == INST.c.uuid
        )
    )


def _json(text: str | None) -> Any:
    return json.loads(text) if text else None


def flavors_from_json(text: str | None) -> dict[str, FlavorSnapshot | None]:
    """``instance_extra.flavor`` ({"cur", "old", "new"}) → snapshots."""
    data = _json(text) or {}
    return {
        key: FlavorSnapshot.from_primitive(data[key]) if data.get(key) else None
        for key in ("cur", "old", "new")
    }


def flavors_to_json(
    cur: FlavorSnapshot, old: FlavorSnapshot | None, new: FlavorSnapshot | None
) -> str:
    return json.dumps(
        {
            "cur": cur.to_primitive(),
            "old": old.to_primitive() if old else None,
            "new": new.to_primitive() if new else None,
        }
    )


def _fallback_flavor(row: sa.RowMapping) -> FlavorSnapshot:
    # Rows written by something else than this repository may lack instance_extra.
    return FlavorSnapshot(
        flavorid="",
        name="",
        memory_mb=row["memory_mb"] or 0,
        vcpus=row["vcpus"] or 0,
        root_gb=row["root_gb"] or 0,
        ephemeral_gb=row["ephemeral_gb"] or 0,
        id=row["instance_type_id"],
    )


def network_info_of(row: sa.RowMapping) -> list[Any]:
    """The info cache of a ``base_select()`` row (Nova's network model list)."""
    return _json(row["cache_network_info"]) or []


@dataclass
class _Related:
    """A page's batch-loaded relations by instance uuid."""

    metadata: dict[str, dict[str, str]]
    system_metadata: dict[str, dict[str, str]]
    tags: dict[str, list[str]]
    security_groups: dict[str, list[str]]
    faults: dict[str, InstanceFault]
    # Flavor JSON texts repeat across a page: decode each distinct one once.
    flavors: dict[str | None, dict[str, FlavorSnapshot | None]] = field(default_factory=dict)


INSTANCE_FIELDS = frozenset(f.name for f in dataclasses.fields(Instance))


def _built(values: dict[str, Any]) -> Instance:
    """``Instance(**values)`` without the frozen dataclass ``__init__`` (one guarded setattr
    per field, 55 of them: the largest cost of decoding a page). ``values`` names every
    field; tests/db/test_instance_repository.py checks both ways build equal instances."""
    instance = object.__new__(Instance)
    instance.__dict__.update(values)
    return instance


def _to_instance(row: sa.RowMapping, related: _Related) -> Instance:
    values: dict[str, Any] = {name: row[name] for name in PLAIN_COLUMNS}
    for name in BOOL_COLUMNS:
        values[name] = bool(row[name])
    text = row["extra_flavor"]
    flavors = related.flavors.get(text)
    if flavors is None:
        flavors = related.flavors[text] = flavors_from_json(text)
    certs = _json(row["extra_trusted_certs"])
    uuid = row["uuid"]
    values.update(
        project_id=row["project_id"] or "",
        user_id=row["user_id"] or "",
        flavor=flavors["cur"] or _fallback_flavor(row),
        old_flavor=flavors["old"],
        new_flavor=flavors["new"],
        trusted_certs=tuple(certs["ids"]) if certs and certs.get("ids") else None,
        network_info=tuple(network_info_of(row)),
        deleted=bool(row["deleted"]),
        metadata=related.metadata.get(uuid, {}),
        system_metadata=related.system_metadata.get(uuid, {}),
        tags=tuple(related.tags.get(uuid, ())),
        security_groups=tuple(related.security_groups.get(uuid, ())),
        fault=related.faults.get(uuid),
    )
    return _built(values)


_Owners = dict[str, Any]
"""uuid → ``deleted_at`` of the deleted instances of a page (None for live ones)."""

RELATIONS = frozenset({"metadata", "system_metadata", "tags", "security_groups", "fault"})
"""Batch-loaded relations; a caller may skip some (a list view may not need system metadata)."""

FAULT_IF_SHOWN = "fault:shown"
"""A relation: the latest fault of the instances in ``FAULT_VM_STATES`` only (what a view shows;
``fault`` loads it for every instance)."""

VIEW_RELATIONS = RELATIONS - {"fault"} | {FAULT_IF_SHOWN}
"""Every relation as a server view needs it."""

LOCKED_REASON = "system_metadata:locked_reason"
"""A relation: only the ``locked_reason`` key of the system metadata (what a list view of
2.73 to 2.97 shows of it). Never load it for an instance that will be written back."""

UUIDS: sa.BindParameter[list[str]] = sa.bindparam("uuids", expanding=True)
"""The page's instance uuids, bound per execution (statements below are built once)."""


def _kind(letter: str) -> sa.ColumnElement[str]:
    return sa.literal_column(f"'{letter}'", sa.String).label("kind")


def _relation_select(kind: str, live_only: bool) -> sa.Select[Any]:
    """One relation as (kind, uuid, key, value, deleted, deleted_at, ord) rows."""
    if kind == LOCKED_REASON:
        only = _relation_select("system_metadata", live_only)
        return only.where(SYSMETA.c.key == "locked_reason")
    if kind in ("metadata", "system_metadata"):
        table = META if kind == "metadata" else SYSMETA
        query = sa.select(
            _kind(kind[0]),
            table.c.instance_uuid.label("uuid"),
            table.c.key.label("key"),
            table.c.value.label("value"),
            table.c.deleted.label("deleted"),
            table.c.deleted_at.label("deleted_at"),
            table.c.id.label("ord"),
        ).where(table.c.instance_uuid.in_(UUIDS))
        return query.where(table.c.deleted == 0) if live_only else query
    if kind == "tags":
        return sa.select(
            _kind("t"),
            TAGS.c.resource_id,
            TAGS.c.tag,
            sa.cast(sa.null(), sa.String),
            sa.literal_column("0", sa.Integer),
            sa.cast(sa.null(), sa.DateTime),
            sa.literal_column("0", sa.Integer),
        ).where(TAGS.c.resource_id.in_(UUIDS))
    query = (
        sa.select(
            _kind("g"),
            SG_ASSOC.c.instance_uuid,
            SG.c.name,
            sa.cast(sa.null(), sa.String),
            SG_ASSOC.c.deleted,
            SG_ASSOC.c.deleted_at,
            SG_ASSOC.c.id,
        )
        .join(SG, SG.c.id == SG_ASSOC.c.security_group_id)
        .where(SG_ASSOC.c.instance_uuid.in_(UUIDS))
    )
    return query.where(SG_ASSOC.c.deleted == 0) if live_only else query


_RELATION_ORDER = ("metadata", "system_metadata", LOCKED_REASON, "tags", "security_groups")
_RELATION_SQL: dict[tuple[frozenset[str], bool], Any] = {}


def _relations_statement(kinds: frozenset[str], live_only: bool) -> Any:
    """metadata, system metadata, tags and security groups of a page in ONE statement (UNION
    ALL), built once per combination: per-statement overhead dominates a one-server read."""
    key = (kinds, live_only)
    found = _RELATION_SQL.get(key)
    if found is None:
        parts = [_relation_select(k, live_only) for k in _RELATION_ORDER if k in kinds]
        found = parts[0] if len(parts) == 1 else sa.union_all(*parts)
        _RELATION_SQL[key] = found
    return found


def _visible(deleted: int, deleted_at: Any, owner_deleted_at: Any) -> bool:
    """A related row belongs to the instance's view: live, or deleted together with it."""
    return deleted == 0 or (owner_deleted_at is not None and deleted_at == owner_deleted_at)


def _load_related(conn: sa.Connection, owners: _Owners, relations: frozenset[str]) -> _Related:
    related = _Related({}, {}, {}, {}, {})
    kinds = relations & frozenset(_RELATION_ORDER)
    if kinds:
        live_only = all(v is None for v in owners.values())
        statement = _relations_statement(frozenset(kinds), live_only)
        found = sorted(
            conn.execute(statement, {"uuids": list(owners)}).all(), key=lambda r: (r[0], r[6])
        )
        kv = {"m": related.metadata, "s": related.system_metadata}
        tags: dict[str, list[str]] = related.tags
        groups: dict[str, list[str]] = related.security_groups
        for kind, uuid, key, value, deleted, deleted_at, _ord in found:
            if deleted and not _visible(deleted, deleted_at, owners[uuid]):
                continue
            if kind in kv:
                kv[kind].setdefault(uuid, {})[key] = value
            elif kind == "t":
                tags.setdefault(uuid, []).append(key)
            else:
                groups.setdefault(uuid, []).append(key)
        for names in tags.values():
            names.sort()
    return related


_NEWEST_FAULTS = sa.select(FAULTS).where(
    FAULTS.c.id.in_(
        sa.select(sa.func.max(FAULTS.c.id))
        .where(FAULTS.c.instance_uuid.in_(UUIDS), FAULTS.c.deleted == 0)
        .group_by(FAULTS.c.instance_uuid)
        .scalar_subquery()
    )
)


def latest_faults(conn: sa.Connection, uuids: Iterable[str]) -> dict[str, InstanceFault]:
    """The newest live fault of each instance, in one statement."""
    wanted = list(uuids)
    if not wanted:
        return {}
    rows = conn.execute(_NEWEST_FAULTS, {"uuids": wanted})
    return {row.instance_uuid: fault_from_row(row) for row in rows}


FAULT_VM_STATES = frozenset({"error", "deleted"})
"""The vm_states whose fault the API shows (ERROR and DELETED servers)."""


def fault_from_row(row: Any) -> InstanceFault:
    return InstanceFault(
        code=row.code,
        message=row.message or "",
        details=row.details,
        created_at=row.created_at,
        host=row.host,
    )


def build_instances(
    conn: sa.Connection, found: Sequence[sa.RowMapping], relations: frozenset[str] = RELATIONS
) -> list[Instance]:
    """``base_select()`` rows → instances with the ``relations`` loaded (three statements at
    most, whatever the number of rows); relations not loaded are left empty."""
    if not found:
        return []
    owners: _Owners = {row["uuid"]: row["deleted_at"] if row["deleted"] else None for row in found}
    related = _load_related(conn, owners, relations)
    if "fault" in relations:
        related.faults = latest_faults(conn, owners)
    elif FAULT_IF_SHOWN in relations:
        failed = [r["uuid"] for r in found if r["vm_state"] in FAULT_VM_STATES or r["deleted"]]
        related.faults = latest_faults(conn, failed)
    return [_to_instance(row, related) for row in found]
