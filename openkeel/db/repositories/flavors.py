"""SQL for flavors, their extra specs and project access (API database), used by the flavor
use cases.

A flavor list is one SELECT (visibility, filters, keyset paging) plus, when the caller wants
extra specs, one SELECT of the specs of the same page (a join on the page query); never a
query per flavor. Statements are built once per query shape and reused with bound values, so
a request pays neither statement construction nor SQLAlchemy's cache-key walk; rows are
unpacked positionally (columns are selected in the order of the entity's fields).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, NamedTuple

import sqlalchemy as sa

from openkeel.db.engine import reader
from openkeel.db.schema import api as api_schema
from openkeel.db.schema.columns import utcnow
from openkeel.domain.errors import Conflict
from openkeel.domain.flavors import (
    Flavor,
    FlavorFilters,
    FlavorPage,
    NewFlavor,
    Viewer,
    access_exists,
    access_not_found,
    extra_spec_not_found,
    flavor_id_exists,
    flavor_name_exists,
    flavor_not_found,
    marker_not_found,
)

_F = api_schema.flavors
_SPECS = api_schema.flavor_extra_specs
_PROJECTS = api_schema.flavor_projects
_SPEC_RETRIES = 10
# The columns of a Flavor, in the order of its fields (extra_specs aside).
_COLUMNS = (
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
_POSITION = {column.name: i for i, column in enumerate(_COLUMNS)}
_SPEC_COLUMNS = (_SPECS.c.flavor_id, _SPECS.c.key, _SPECS.c.value)
_PROJECT_ID = sa.bindparam("project_id", type_=_PROJECTS.c.project_id.type)


def _to_flavor(row: Sequence[Any], specs: dict[str, str] | None = None) -> Flavor:
    (pk, flavorid, name, memory_mb, vcpus, root_gb, ephemeral_gb, swap) = row[:8]
    (rxtx_factor, vcpu_weight, disabled, is_public, description, created, updated) = row[8:]
    return Flavor(
        pk,
        flavorid,
        name,
        memory_mb or 0,
        vcpus or 0,
        root_gb or 0,
        ephemeral_gb or 0,
        swap or 0,
        rxtx_factor,
        vcpu_weight,
        bool(disabled),
        bool(is_public),
        description,
        created,
        updated,
        {} if specs is None else specs,
    )


def _shared() -> sa.ColumnElement[bool]:
    return sa.exists().where(
        _PROJECTS.c.flavor_id == _F.c.id, _PROJECTS.c.project_id == _PROJECT_ID
    )


def _visible(admin: bool) -> sa.Select[Any]:
    """Flavors the viewer may see: all for admins, else public or shared with its project."""
    query = sa.select(*_COLUMNS)
    if not admin:
        query = query.where(sa.or_(_F.c.is_public == sa.true(), _shared()))
    return query


class _Shape(NamedTuple):
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


def _filtered(query: sa.Select[Any], shape: _Shape) -> sa.Select[Any]:
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
def _list_statement(shape: _Shape) -> sa.Select[Any]:
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
def _page_specs_statement(shape: _Shape) -> sa.Select[Any]:
    """The extra specs of every flavor of the page ``shape`` selects (same bound values)."""
    page = _list_statement(shape).with_only_columns(_F.c.id).subquery("page")
    return (
        sa.select(*_SPEC_COLUMNS)
        .join_from(_SPECS, page, _SPECS.c.flavor_id == page.c.id)
        .order_by(_SPECS.c.id)
    )


_FLAVORID = sa.bindparam("flavorid", type_=_F.c.flavorid.type)
_MARKER_ROW = {
    admin: _visible(admin).where(_F.c.flavorid == _FLAVORID).limit(1) for admin in (False, True)
}
_GET = {
    admin: _visible(admin).where(_F.c.flavorid == _FLAVORID).order_by(_F.c.id).limit(1)
    for admin in (False, True)
}
_SPECS_OF_ONE = (
    sa.select(*_SPEC_COLUMNS)
    .where(_SPECS.c.flavor_id == sa.bindparam("flavor_pk"))
    .order_by(_SPECS.c.id)
)
_ID_BY_FLAVORID = sa.select(_F.c.id).where(_F.c.flavorid == _FLAVORID).order_by(_F.c.id).limit(1)
_PROJECTS_OF = (
    sa.select(_PROJECTS.c.project_id)
    .where(_PROJECTS.c.flavor_id == sa.bindparam("flavor_pk"))
    .order_by(_PROJECTS.c.id)
)


def _shape_of(viewer: Viewer, filters: FlavorFilters, page: FlavorPage) -> _Shape:
    return _Shape(
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


def _list_params(viewer: Viewer, filters: FlavorFilters, page: FlavorPage) -> dict[str, Any]:
    return {
        "project_id": viewer.project_id,
        "is_public": filters.is_public,
        "disabled": filters.disabled,
        "min_memory_mb": filters.min_memory_mb,
        "min_root_gb": filters.min_root_gb,
        "name_regex": filters.name_regex,
        "limit": page.limit,
    }


def _marker_params(keys: Sequence[str], marker: Sequence[Any]) -> dict[str, Any]:
    params: dict[str, Any] = {}
    for i, key in enumerate(keys):
        value = marker[_POSITION[key]]
        params[f"marker_{i}"] = value
        if value is not None and isinstance(_F.c[key].type, sa.Boolean):
            params[f"marker_{i}_int"] = int(value)
    return params


def _grouped(rows: Any) -> dict[int, dict[str, str]]:
    """``(flavor_id, key, value)`` rows as {flavor_id: {key: value}}, in row order."""
    found: dict[int, dict[str, str]] = {}
    for flavor_pk, key, value in rows:
        specs = found.get(flavor_pk)
        if specs is None:
            specs = found[flavor_pk] = {}
        specs[key] = value
    return found


class FlavorRepository:
    """Flavor rows, extra specs and access lists in the API database."""

    def __init__(self, engine: sa.Engine) -> None:
        self._engine = engine
        self._reader = reader(engine)

    def find(
        self, viewer: Viewer, filters: FlavorFilters, page: FlavorPage, with_specs: bool
    ) -> list[Flavor]:
        """Visible flavors matching ``filters``, ordered and paged as ``page`` says."""
        if filters.name_regex is not None and self._engine.dialect.name == "mysql":
            # MySQL's REGEXP rejects a bare "|"; Nova escapes every one of them.
            filters = replace(filters, name_regex=filters.name_regex.replace("|", "\\|"))
        shape = _shape_of(viewer, filters, page)
        params = _list_params(viewer, filters, page)
        with self._reader.connect() as conn:
            if page.marker is not None:
                marker = conn.execute(
                    _MARKER_ROW[viewer.is_admin],
                    {"project_id": viewer.project_id, "flavorid": page.marker},
                ).first()
                if marker is None:
                    raise marker_not_found(page.marker)
                keys = (page.sort_key, "id")
                shape = shape._replace(
                    marker=tuple(marker[_POSITION[key]] is not None for key in keys)
                )
                params.update(_marker_params(keys, marker))
            rows = conn.execute(_list_statement(shape), params).all()
            specs = self._page_specs(conn, shape, params) if with_specs and rows else {}
        return [_to_flavor(row, specs.get(row[0])) for row in rows]

    def get(self, viewer: Viewer, flavorid: str) -> Flavor:
        """The visible flavor ``flavorid`` with its extra specs, or FlavorNotFound."""
        with self._reader.connect() as conn:
            return self._get(conn, viewer, flavorid)

    def create(self, new: NewFlavor) -> Flavor:
        """Insert ``new``; 409 with Nova's message when its id or name is taken."""
        now = utcnow()
        values = {
            "flavorid": new.flavorid,
            "name": new.name,
            "memory_mb": new.memory_mb,
            "vcpus": new.vcpus,
            "root_gb": new.root_gb,
            "ephemeral_gb": new.ephemeral_gb,
            "swap": new.swap,
            "rxtx_factor": new.rxtx_factor,
            "is_public": new.is_public,
            "disabled": False,
            "description": new.description,
            "created_at": now,
        }
        try:
            with self._engine.begin() as conn:
                conn.execute(sa.insert(_F).values(**values))
        except sa.exc.IntegrityError as exc:
            raise self._duplicate(new) from exc
        return self.get(Viewer(None, is_admin=True), new.flavorid)

    def _duplicate(self, new: NewFlavor) -> Conflict:
        with self._reader.connect() as conn:
            taken = conn.execute(_ID_BY_FLAVORID, {"flavorid": new.flavorid}).first()
        return flavor_id_exists(new.flavorid) if taken else flavor_name_exists(new.name)

    def update_description(self, viewer: Viewer, flavorid: str, description: str | None) -> Flavor:
        """Set the description of the visible flavor ``flavorid``; return it afterwards."""
        with self._engine.begin() as conn:
            flavor = self._get(conn, viewer, flavorid)
            conn.execute(
                sa.update(_F)
                .where(_F.c.id == flavor.id)
                .values(description=description, updated_at=utcnow())
            )
            return self._get(conn, viewer, flavorid)

    def destroy(self, flavorid: str) -> None:
        """Delete flavor ``flavorid`` (whatever its visibility) with its specs and access."""
        with self._engine.begin() as conn:
            found = conn.execute(_ID_BY_FLAVORID, {"flavorid": flavorid}).first()
            if found is None:
                raise flavor_not_found(flavorid)
            conn.execute(sa.delete(_PROJECTS).where(_PROJECTS.c.flavor_id == found.id))
            conn.execute(sa.delete(_SPECS).where(_SPECS.c.flavor_id == found.id))
            conn.execute(sa.delete(_F).where(_F.c.id == found.id))

    def set_extra_specs(self, flavor_pk: int, specs: Mapping[str, str]) -> None:
        """Create or update ``specs`` on the flavor; retried on a concurrent insert race."""
        for _attempt in range(_SPEC_RETRIES):
            try:
                with self._engine.begin() as conn:
                    self._upsert_specs(conn, flavor_pk, specs)
                return
            except sa.exc.IntegrityError:
                continue
        raise Conflict(
            f"Flavor {flavor_pk} extra spec cannot be updated or created after "
            f"{_SPEC_RETRIES} retries."
        )

    def delete_extra_spec(self, flavor_pk: int, flavorid: str, key: str) -> None:
        """Remove one extra spec; 404 with Nova's message when the flavor lacks it."""
        with self._engine.begin() as conn:
            gone = conn.execute(
                sa.delete(_SPECS).where(_SPECS.c.flavor_id == flavor_pk, _SPECS.c.key == key)
            )
        if gone.rowcount == 0:
            raise extra_spec_not_found(flavorid, key)

    def projects(self, flavor_pk: int) -> list[str]:
        """Projects the flavor is shared with, in the order access was granted."""
        with self._reader.connect() as conn:
            return self._projects(conn, flavor_pk)

    def add_project(self, flavor_pk: int, project_id: str) -> list[str]:
        """Share the flavor with ``project_id``; return the new access list."""
        try:
            with self._engine.begin() as conn:
                conn.execute(
                    sa.insert(_PROJECTS).values(
                        flavor_id=flavor_pk, project_id=project_id, created_at=utcnow()
                    )
                )
        except sa.exc.IntegrityError as exc:
            raise access_exists(flavor_pk, project_id) from exc
        return self.projects(flavor_pk)

    def remove_project(self, flavor_pk: int, project_id: str) -> list[str]:
        """Stop sharing the flavor with ``project_id``; return the new access list."""
        with self._engine.begin() as conn:
            gone = conn.execute(
                sa.delete(_PROJECTS).where(
                    _PROJECTS.c.flavor_id == flavor_pk, _PROJECTS.c.project_id == project_id
                )
            )
            if gone.rowcount == 0:
                raise access_not_found(flavor_pk, project_id)
            return self._projects(conn, flavor_pk)

    def _get(self, conn: sa.Connection, viewer: Viewer, flavorid: str) -> Flavor:
        params = {"project_id": viewer.project_id, "flavorid": flavorid}
        row = conn.execute(_GET[viewer.is_admin], params).first()
        if row is None:
            raise flavor_not_found(flavorid)
        specs = _grouped(conn.execute(_SPECS_OF_ONE, {"flavor_pk": row[0]}))
        return _to_flavor(row, specs.get(row[0]))

    @staticmethod
    def _page_specs(
        conn: sa.Connection, shape: _Shape, params: Mapping[str, Any]
    ) -> dict[int, dict[str, str]]:
        return _grouped(conn.execute(_page_specs_statement(shape), params))

    @staticmethod
    def _projects(conn: sa.Connection, flavor_pk: int) -> list[str]:
        return list(conn.execute(_PROJECTS_OF, {"flavor_pk": flavor_pk}).scalars())

    @staticmethod
    def _upsert_specs(conn: sa.Connection, flavor_pk: int, specs: Mapping[str, str]) -> None:
        existing = set(
            conn.execute(
                sa.select(_SPECS.c.key).where(
                    _SPECS.c.flavor_id == flavor_pk, _SPECS.c.key.in_(list(specs))
                )
            ).scalars()
        )
        now = utcnow()
        for key in existing:
            conn.execute(
                sa.update(_SPECS)
                .where(_SPECS.c.flavor_id == flavor_pk, _SPECS.c.key == key)
                .values(value=specs[key], updated_at=now)
            )
        fresh = [
            {"flavor_id": flavor_pk, "key": k, "value": v, "created_at": now}
            for k, v in specs.items()
            if k not in existing
        ]
        if fresh:
            conn.execute(sa.insert(_SPECS), fresh)
