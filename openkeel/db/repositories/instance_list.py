"""Listing instances of one cell DB with Nova's filters, sort keys and marker paging.

Used by ``openkeel.db.cell_router`` (which merges the cells' pages) and so by ``GET /servers``
and ``/servers/detail``, and by compute/conductor for host-scoped lookups. Sort order treats
NULL as the smallest value on every backend so that pages of different cells merge.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from openkeel.db import regex_filters
from openkeel.db.repositories import instance_rows as rows
from openkeel.domain.instances import Instance, InvalidSortDirection, InvalidSortKey
from openkeel.domain.states import StatusFilter, VmState

INST = rows.INST
DEFAULT_SORT_KEYS = ("created_at", "id")
DEFAULT_SORT_DIR = "desc"
TIEBREAK_KEY = "uuid"
# The query parameter behind a regex column, where their names differ (for 400 messages).
_PARAMETERS = {"display_name": "name"}


@dataclass(frozen=True)
class InstanceFilters:
    """Nova's instance filters; None/empty means "not filtered".

    ``deleted`` False (the API's default) hides deleted rows and SOFT_DELETED servers unless
    ``soft_deleted`` is True; True shows deleted rows and, unless ``soft_deleted`` is False,
    SOFT_DELETED ones; None shows everything. ``regex`` maps instances columns to patterns
    (``name`` → ``display_name`` is typed), ``exact`` maps columns to a value or list.
    ``ip``/``ip6`` match (from the start) fixed addresses of the info cache, in Python.
    """

    project_id: str | None = None
    user_id: str | None = None
    uuids: Sequence[str] | None = None
    name: str | None = None
    status: StatusFilter | None = None
    vm_states: Sequence[str] | None = None
    task_states: Sequence[str | None] | None = None
    host: str | Sequence[str] | None = None
    node: str | None = None
    image_ref: str | None = None
    flavor_id: int | None = None
    reservation_id: str | None = None
    availability_zone: str | None = None
    locked: bool | None = None
    hidden: bool = False
    deleted: bool | None = False
    soft_deleted: bool | None = None
    changes_since: datetime | None = None
    changes_before: datetime | None = None
    tags: Sequence[str] = ()
    tags_any: Sequence[str] = ()
    not_tags: Sequence[str] = ()
    not_tags_any: Sequence[str] = ()
    active_from: datetime | None = None  # terminated_at is NULL or >= this
    active_until: datetime | None = None  # launched_at is NULL or <= this (usage windows)
    ip: str | None = None
    ip6: str | None = None
    regex: Mapping[str, str] = field(default_factory=dict)
    exact: Mapping[str, Any] = field(default_factory=dict)


def _in_or_eq(column: sa.ColumnElement[Any], value: Any) -> sa.ColumnElement[bool]:
    if isinstance(value, list | tuple | set | frozenset):
        return column.in_(list(value))
    equal: sa.ColumnElement[bool] = column == value
    return equal


def _column(name: str) -> sa.ColumnElement[Any]:
    if name not in INST.c:
        raise InvalidSortKey()
    return INST.c[name]


def _deleted_clauses(f: InstanceFilters) -> list[sa.ColumnElement[bool]]:
    if f.deleted is None:
        return []
    if f.deleted:
        if f.soft_deleted is False:
            return [INST.c.deleted == INST.c.id]
        return [sa.or_(INST.c.deleted == INST.c.id, INST.c.vm_state == VmState.SOFT_DELETED.value)]
    clauses: list[sa.ColumnElement[bool]] = [INST.c.deleted == 0]
    if not f.soft_deleted:
        clauses.append(
            sa.or_(INST.c.vm_state != VmState.SOFT_DELETED.value, INST.c.vm_state.is_(None))
        )
    return clauses


def _state_clauses(f: InstanceFilters) -> list[sa.ColumnElement[bool]]:
    out: list[sa.ColumnElement[bool]] = []
    if f.status is not None:
        out.append(INST.c.vm_state.in_(list(f.status.vm_states)))
        if not f.status.any_task_state:
            out.append(INST.c.task_state.in_(list(f.status.task_states)))
    if f.vm_states is not None:
        out.append(INST.c.vm_state.in_(list(f.vm_states)))
    if f.task_states is not None:
        named = [s for s in f.task_states if s is not None]
        either = [INST.c.task_state.in_(named)] if named else []
        if None in f.task_states:
            either.append(INST.c.task_state.is_(None))
        out.append(sa.or_(*either) if either else sa.false())
    return out


def _tag_clauses(f: InstanceFilters) -> list[sa.ColumnElement[bool]]:
    tags = rows.TAGS

    def having(tag: str) -> sa.Exists:
        return sa.exists().where(tags.c.resource_id == INST.c.uuid, tags.c.tag == tag)

    out: list[sa.ColumnElement[bool]] = [having(tag) for tag in f.tags]
    if f.tags_any:
        out.append(
            sa.exists().where(tags.c.resource_id == INST.c.uuid, tags.c.tag.in_(list(f.tags_any)))
        )
    if f.not_tags:
        out.append(sa.not_(sa.and_(*[having(tag) for tag in f.not_tags])))
    if f.not_tags_any:
        out.append(
            ~sa.exists().where(
                tags.c.resource_id == INST.c.uuid, tags.c.tag.in_(list(f.not_tags_any))
            )
        )
    return out


def regex_patterns(f: InstanceFilters) -> dict[str, str]:
    """The column -> pattern filters of ``f`` matched in SQL (``name`` is ``display_name``)."""
    patterns = dict(f.regex)
    for column, value in (
        ("display_name", f.name),
        ("node", f.node),
        ("reservation_id", f.reservation_id),
        ("availability_zone", f.availability_zone),
    ):
        if value is not None:
            patterns[column] = value
    return patterns


def _regex_clauses(f: InstanceFilters, dialect: str) -> list[sa.ColumnElement[bool]]:
    return [
        _column(name).regexp_match(regex_filters.for_database(dialect, value))
        for name, value in regex_patterns(f).items()
    ]


def where_clauses(f: InstanceFilters, dialect: str = "sqlite") -> list[sa.ColumnElement[bool]]:
    """The SQL conditions of ``f`` (everything but ``ip``/``ip6``) for the ``dialect``."""
    out = _deleted_clauses(f) + _state_clauses(f) + _tag_clauses(f) + _regex_clauses(f, dialect)
    if f.hidden:
        out.append(INST.c.hidden == sa.true())
    else:
        out.append(sa.or_(INST.c.hidden == sa.false(), INST.c.hidden.is_(None)))
    exact: dict[str, Any] = dict(f.exact)
    for column, value in (
        ("project_id", f.project_id),
        ("user_id", f.user_id),
        ("uuid", f.uuids),
        ("host", f.host),
        ("image_ref", f.image_ref),
        ("instance_type_id", f.flavor_id),
        ("locked", f.locked),
    ):
        if value is not None:
            exact[column] = value
    out += [_in_or_eq(_column(name), value) for name, value in exact.items()]
    if f.changes_since is not None:
        out.append(INST.c.updated_at >= f.changes_since)
    if f.changes_before is not None:
        out.append(INST.c.updated_at <= f.changes_before)
    if f.active_from is not None:
        out.append(sa.or_(INST.c.terminated_at.is_(None), INST.c.terminated_at >= f.active_from))
    if f.active_until is not None:
        out.append(sa.or_(INST.c.launched_at.is_(None), INST.c.launched_at <= f.active_until))
    return out


def normalize_sort(
    sort_keys: Sequence[str] | None, sort_dirs: Sequence[str] | None
) -> tuple[list[str], list[str]]:
    """Nova's ``process_sort_params`` plus ``uuid`` as the final tie-break across cells."""
    keys = list(sort_keys or ())
    dirs = list(sort_dirs or ())
    if any(direction not in ("asc", "desc") for direction in dirs):
        raise InvalidSortDirection("Unknown sort direction, must be 'desc' or 'asc'")
    if len(dirs) > len(keys):
        raise InvalidSortDirection("Sort direction size exceeds sort key size")
    default_dir = dirs[0] if dirs else DEFAULT_SORT_DIR
    dirs += [default_dir] * (len(keys) - len(dirs))
    for key in (*DEFAULT_SORT_KEYS, TIEBREAK_KEY):
        if key not in keys:
            keys.append(key)
            dirs.append(default_dir)
    for key in keys:
        _column(key)
    return keys, dirs


def _order_by(keys: Sequence[str], dirs: Sequence[str]) -> list[sa.ColumnElement[Any]]:
    out: list[sa.ColumnElement[Any]] = []
    for key, direction in zip(keys, dirs, strict=True):
        column = _column(key)
        null_first = sa.case((column.is_(None), 0), else_=1)
        if direction == "asc":
            out += [null_first.asc(), column.asc()]
        else:
            out += [null_first.desc(), column.desc()]
    return out


def after_marker(
    keys: Sequence[str], dirs: Sequence[str], values: Sequence[Any]
) -> sa.ColumnElement[bool]:
    """Rows strictly after a row with sort ``values`` in this order (NULL smallest)."""
    alternatives: list[sa.ColumnElement[bool]] = []
    equal_so_far: list[sa.ColumnElement[bool]] = []
    for key, direction, value in zip(keys, dirs, values, strict=True):
        column = _column(key)
        if direction == "asc":
            beyond = column.is_not(None) if value is None else column > value
        else:
            beyond = sa.false() if value is None else sa.or_(column < value, column.is_(None))
        alternatives.append(sa.and_(*equal_so_far, beyond))
        equal_so_far.append(column.is_(None) if value is None else column == value)
    return sa.or_(*alternatives)


def sort_values(instance: Instance, keys: Sequence[str]) -> list[Any]:
    """The instance's values for ``keys`` (``instances`` column names)."""
    out: list[Any] = []
    for key in keys:
        if key in ("memory_mb", "vcpus", "root_gb", "ephemeral_gb"):
            out.append(getattr(instance.flavor, key))
        elif key == "instance_type_id":
            out.append(instance.flavor.id)
        elif key == "deleted":
            out.append(instance.id if instance.deleted else 0)
        else:
            out.append(getattr(instance, key, None))
    return out


def compare(dirs: Sequence[str], left: Sequence[Any], right: Sequence[Any]) -> int:
    """Order of two sort-value lists as the database orders them (NULL smallest)."""
    for direction, a, b in zip(dirs, left, right, strict=True):
        if a == b:
            continue
        result = -1 if (a is None or (b is not None and a < b)) else 1
        return result if direction == "asc" else -result
    return 0


def sort_key(keys: Sequence[str], dirs: Sequence[str]) -> Any:
    """A ``key=`` function ordering instances as ``list_instances`` does."""

    def by_dirs(a: Sequence[Any], b: Sequence[Any]) -> int:
        return compare(dirs, a, b)

    cmp = functools.cmp_to_key(by_dirs)
    return lambda inst: cmp(sort_values(inst, keys))


def _fixed_ips(network_info: Sequence[Mapping[str, Any]]) -> list[tuple[int | None, str]]:
    found: list[tuple[int | None, str]] = []
    for vif in network_info:
        for subnet in (vif.get("network") or {}).get("subnets") or []:
            for ip in subnet.get("ips") or []:
                if ip.get("address") and ip.get("type", "fixed") == "fixed":
                    found.append((ip.get("version"), ip["address"]))
    return found


def _matches_ip(row: sa.RowMapping, f: InstanceFilters) -> bool:
    v4 = re.compile(str(f.ip))
    v6 = re.compile(str(f.ip6))
    for version, address in _fixed_ips(rows.network_info_of(row)):
        if (version == 4 and v4.match(address)) or (version == 6 and v6.match(address)):
            return True
    return False


def list_instances(
    conn: sa.Connection,
    filters: InstanceFilters,
    *,
    sort_keys: Sequence[str] | None = None,
    sort_dirs: Sequence[str] | None = None,
    limit: int | None = None,
    marker_values: Sequence[Any] | None = None,
    relations: frozenset[str] = rows.RELATIONS,
) -> list[Instance]:
    """One page of instances (with ``relations``, see ``instance_rows.RELATIONS``) of this cell.

    ``marker_values`` are the marker's ``sort_values`` for the normalized keys (the caller
    finds the marker, possibly in another cell). A fixed number of statements per page.
    """
    if limit == 0:
        return []
    keys, dirs = normalize_sort(sort_keys, sort_dirs)
    query = rows.base_select().where(*where_clauses(filters, conn.dialect.name))
    if marker_values is not None:
        query = query.where(after_marker(keys, dirs, marker_values))
    query = query.order_by(*_order_by(keys, dirs))
    by_ip = filters.ip is not None or filters.ip6 is not None
    if limit is not None and not by_ip:
        query = query.limit(limit)
    patterns = {_PARAMETERS.get(c, c): p for c, p in regex_patterns(filters).items()}
    with regex_filters.refused_patterns_as_invalid(conn.engine, patterns):
        found = conn.execute(query).mappings().all()
    if by_ip:
        found = [row for row in found if _matches_ip(row, filters)][:limit]
    return rows.build_instances(conn, found, relations)
