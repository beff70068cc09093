"""The SQL statements of the flavor repository, built once per query shape.

A flavor list's SQL text depends only on which filters are present, the viewer's kind
(admin or not), the sort and whether a marker or limit applies (``ListShape``); the values
are bound at execution (``list_params``, ``marker_params``). Built statements are cached, so
a request pays neither statement construction nor SQLAlchemy's cache-key walk.
Used by ``openkeel.db.repositories.flavors`` only.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, NamedTuple

import sqlalchemy as sa

from openkeel.db.schema import api as api_schema
from openkeel.domain.flavors import FlavorFilters, FlavorPage, Viewer

_F = api_schema.flavors
_SPECS = api_schema.flavor_extra_specs
_PROJECTS = api_schema.flavor_projects
# The columns of a Flavor, in the order of its fields (extra_specs aside).
COLUMNS = (
    _F.c.id,
    _F.c.flavorid,
    _F.c.name,
    _F.c.memory_mb,
    _F.c.vcpus,
    _F.c.root_gb,
    _F.c.ephemeral_gb,
    _F.c.swap,
    _F.c.rxtx_factor,
    _F.c.vcpu_weight,
    _F.c.disabled,
    _F.c.is_public,
    _F.c.description,
    _F.c.created_at,
    _F.c.updated_at,
)
POSITION = {column.name: i for i, column in enumerate(COLUMNS)}
_SPEC_COLUMNS = (_SPECS.c.flavor_id, _SPECS.c.key, _SPECS.c.value)
_PROJECT_ID = sa.bindparam("project_id", type_=_PROJECTS.c.project_id.type)


def _shared() -> sa.ColumnElement[bool]:
    return sa.exists().where(
        _PROJECTS.c.flavor_id == _F.c.id, _PROJECTS.c.project_id == _PROJECT_ID
    )


def _visible(admin: bool) -> sa.Select[Any]:
    """Flavors the viewer may see: all for admins, else public or shared with its project."""
    query = sa.select(*COLUMNS)
    if not admin:
        query = query.where(sa.or_(_F.c.is_public == sa.true(), _shared()))
    return query


class ListShape(NamedTuple):
    """What decides the SQL text of a flavor list (the values are bound separately)."""

    admin: bool
    public: bool | None  # the is_public filter: None (all), True or False
    public_shared: bool  # "public" also admits flavors shared with the viewer's project
    disabled: bool
    min_memory: bool
    min_root: bool
    regex: bool
    sort_key: str
    descending: bool
    marker: tuple[bool, ...] | None  # per sort key: whether the marker row has a value
    limit: bool


def _filtered(query: sa.Select[Any], shape: ListShape) -> sa.Select[Any]:
    if shape.min_memory:
        query = query.where(_F.c.memory_mb >= sa.bindparam("min_memory_mb"))
    if shape.min_root:
        query = query.where(_F.c.root_gb >= sa.bindparam("min_root_gb"))
    if shape.disabled:
        query = query.where(_F.c.disabled == sa.bindparam("disabled"))
    if shape.regex:
        query = query.where(_F.c.name.regexp_match(sa.bindparam("name_regex", type_=sa.String)))
    if shape.public is not None:
        clause: sa.ColumnElement[bool] = _F.c.is_public == sa.bindparam("is_public")
        if shape.public_shared:
            clause = sa.or_(clause, _shared())
        query = query.where(clause)
    return query


def _after_marker(keys: Sequence[str], present: Sequence[bool], descending: bool) -> Any:
    """Rows strictly after the marker in (keys...) order; NULL marker values (``present``
    False) are skipped as oslo.db's paginate_query does (the trailing ``id`` key keeps the
    order total). Binds ``marker_<i>`` (and ``marker_<i>_int`` for booleans)."""
    criteria = []
    for i, key in enumerate(keys):
        if not present[i]:
            continue
        equal = [_F.c[keys[j]] == sa.bindparam(f"marker_{j}") for j in range(i) if present[j]]
        column: Any = _F.c[key]
        value: Any = sa.bindparam(f"marker_{i}")
        if isinstance(column.type, sa.Boolean):
            column = sa.cast(column, sa.Integer)
            value = sa.bindparam(f"marker_{i}_int", type_=sa.Integer)
        step = column < value if descending else column > value
        criteria.append(sa.and_(*equal, step))
    return sa.or_(*criteria)


@functools.lru_cache(maxsize=256)
def list_statement(shape: ListShape) -> sa.Select[Any]:
    query = _filtered(_visible(shape.admin), shape)
    keys = (shape.sort_key, "id")
    if shape.marker is not None:
        query = query.where(_after_marker(keys, shape.marker, shape.descending))
    order = sa.desc if shape.descending else sa.asc
    query = query.order_by(*(order(_F.c[key]) for key in keys))
    if shape.limit:
        query = query.limit(sa.bindparam("limit", type_=sa.Integer))
    return query


@functools.lru_cache(maxsize=256)
def page_specs_statement(shape: ListShape) -> sa.Select[Any]:
    """The extra specs of every flavor of the page ``shape`` selects (same bound values)."""
    page = list_statement(shape).with_only_columns(_F.c.id).subquery("page")
    return (
        sa.select(*_SPEC_COLUMNS)
        .join_from(_SPECS, page, _SPECS.c.flavor_id == page.c.id)
        .order_by(_SPECS.c.id)
    )


_FLAVORID = sa.bindparam("flavorid", type_=_F.c.flavorid.type)
MARKER_ROW = {
    admin: _visible(admin).where(_F.c.flavorid == _FLAVORID).limit(1) for admin in (False, True)
}
GET_VISIBLE = {
    admin: _visible(admin).where(_F.c.flavorid == _FLAVORID).order_by(_F.c.id).limit(1)
    for admin in (False, True)
}
SPECS_OF_ONE = (
    sa.select(*_SPEC_COLUMNS)
    .where(_SPECS.c.flavor_id == sa.bindparam("flavor_pk"))
    .order_by(_SPECS.c.id)
)
ID_BY_FLAVORID = sa.select(_F.c.id).where(_F.c.flavorid == _FLAVORID).order_by(_F.c.id).limit(1)
PROJECTS_OF = (
    sa.select(_PROJECTS.c.project_id)
    .where(_PROJECTS.c.flavor_id == sa.bindparam("flavor_pk"))
    .order_by(_PROJECTS.c.id)
)


def shape_of(viewer: Viewer, filters: FlavorFilters, page: FlavorPage) -> ListShape:
    return ListShape(
        admin=viewer.is_admin,
        public=filters.is_public,
        public_shared=bool(filters.is_public) and viewer.project_id is not None,
        disabled=filters.disabled is not None,
        min_memory=filters.min_memory_mb is not None,
        min_root=filters.min_root_gb is not None,
        regex=filters.name_regex is not None,
        sort_key=page.sort_key,
        descending=page.sort_dir == "desc",
        marker=None,
        limit=page.limit is not None,
    )


def list_params(viewer: Viewer, filters: FlavorFilters, page: FlavorPage) -> dict[str, Any]:
    return {
        "project_id": viewer.project_id,
        "is_public": filters.is_public,
        "disabled": filters.disabled,
        "min_memory_mb": filters.min_memory_mb,
        "min_root_gb": filters.min_root_gb,
        "name_regex": filters.name_regex,
        "limit": page.limit,
    }


def marker_params(keys: Sequence[str], marker: Sequence[Any]) -> dict[str, Any]:
    params: dict[str, Any] = {}
    for i, key in enumerate(keys):
        value = marker[POSITION[key]]
        params[f"marker_{i}"] = value
        if value is not None and isinstance(_F.c[key].type, sa.Boolean):
            params[f"marker_{i}_int"] = int(value)
    return params
