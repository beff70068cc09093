"""Reading instances out of a cell DB: the joined SELECT, row → entity, batch loading.

Shared by ``instances`` (get) and ``instance_list`` (pages). One page costs a fixed number of
statements whatever its size: the instances with their ``instance_extra`` and info cache
(joined), then one query each for metadata, system metadata, tags, security groups and the
latest faults.
"""

from __future__ import annotations

import json
from collections import defaultdict
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
    return Instance(
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
        **values,
    )


_Owners = dict[str, Any]
"""uuid → ``deleted_at`` of the deleted instances of a page (None for live ones)."""


def _related_where(
    table: sa.Table, owners: _Owners, column: str = "instance_uuid"
) -> list[sa.ColumnElement[bool]]:
    where: list[sa.ColumnElement[bool]] = [table.c[column].in_(list(owners))]
    if "deleted" in table.c and not any(v is not None for v in owners.values()):
        where.append(table.c.deleted == 0)
    return where


def _visible(deleted: int, deleted_at: Any, owner_deleted_at: Any) -> bool:
    """A related row belongs to the instance's view: live, or deleted together with it."""
    return deleted == 0 or (owner_deleted_at is not None and deleted_at == owner_deleted_at)


def _key_values(conn: sa.Connection, table: sa.Table, owners: _Owners) -> dict[str, dict[str, str]]:
    query = sa.select(
        table.c.instance_uuid, table.c.key, table.c.value, table.c.deleted, table.c.deleted_at
    ).where(*_related_where(table, owners))
    out: dict[str, dict[str, str]] = defaultdict(dict)
    for uuid, key, value, deleted, deleted_at in conn.execute(query.order_by(table.c.id)).all():
        if deleted == 0 or _visible(deleted, deleted_at, owners[uuid]):
            out[uuid][key] = value
    return out


def _tags(conn: sa.Connection, owners: _Owners) -> dict[str, list[str]]:
    query = sa.select(TAGS.c.resource_id, TAGS.c.tag).where(
        *_related_where(TAGS, owners, "resource_id")
    )
    out: dict[str, list[str]] = defaultdict(list)
    for uuid, tag in conn.execute(query.order_by(TAGS.c.resource_id, TAGS.c.tag)).all():
        out[uuid].append(tag)
    return out


def _security_groups(conn: sa.Connection, owners: _Owners) -> dict[str, list[str]]:
    query = (
        sa.select(SG_ASSOC.c.instance_uuid, SG.c.name, SG_ASSOC.c.deleted, SG_ASSOC.c.deleted_at)
        .join(SG, SG.c.id == SG_ASSOC.c.security_group_id)
        .where(*_related_where(SG_ASSOC, owners))
        .order_by(SG_ASSOC.c.id)
    )
    out: dict[str, list[str]] = defaultdict(list)
    for uuid, name, deleted, deleted_at in conn.execute(query).all():
        if _visible(deleted, deleted_at, owners[uuid]):
            out[uuid].append(name)
    return out


def latest_faults(conn: sa.Connection, uuids: Iterable[str]) -> dict[str, InstanceFault]:
    """The newest live fault of each instance, in one statement."""
    wanted = list(uuids)
    if not wanted:
        return {}
    newest = (
        sa.select(sa.func.max(FAULTS.c.id))
        .where(FAULTS.c.instance_uuid.in_(wanted), FAULTS.c.deleted == 0)
        .group_by(FAULTS.c.instance_uuid)
    )
    rows = conn.execute(sa.select(FAULTS).where(FAULTS.c.id.in_(newest.scalar_subquery())))
    return {row.instance_uuid: fault_from_row(row) for row in rows}


def fault_from_row(row: Any) -> InstanceFault:
    return InstanceFault(
        code=row.code,
        message=row.message or "",
        details=row.details,
        created_at=row.created_at,
        host=row.host,
    )


RELATIONS = frozenset({"metadata", "system_metadata", "tags", "security_groups", "fault"})
"""Batch-loaded relations; a caller may skip some (a list view may not need system metadata)."""


def build_instances(
    conn: sa.Connection, found: Sequence[sa.RowMapping], relations: frozenset[str] = RELATIONS
) -> list[Instance]:
    """``base_select()`` rows → instances with the ``relations`` loaded (one statement each,
    whatever the number of rows); relations not loaded are left empty."""
    if not found:
        return []
    owners: _Owners = {row["uuid"]: row["deleted_at"] if row["deleted"] else None for row in found}
    related = _Related(
        metadata=_key_values(conn, META, owners) if "metadata" in relations else {},
        system_metadata=(
            _key_values(conn, SYSMETA, owners) if "system_metadata" in relations else {}
        ),
        tags=_tags(conn, owners) if "tags" in relations else {},
        security_groups=(_security_groups(conn, owners) if "security_groups" in relations else {}),
        faults=latest_faults(conn, owners) if "fault" in relations else {},
    )
    return [_to_instance(row, related) for row in found]
