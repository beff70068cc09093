"""SQL for flavors, their extra specs and project access (API database), used by the flavor
use cases.

A flavor list is one SELECT (visibility, filters, keyset paging) plus, when the caller wants
extra specs, one SELECT of the specs of every listed flavor; never a query per flavor.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

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


def _to_flavor(row: sa.Row[Any], specs: Mapping[str, str] | None = None) -> Flavor:
    return Flavor(
        id=row.id,
        flavorid=row.flavorid,
        name=row.name,
        memory_mb=row.memory_mb or 0,
        vcpus=row.vcpus or 0,
        root_gb=row.root_gb or 0,
        ephemeral_gb=row.ephemeral_gb or 0,
        swap=row.swap or 0,
        rxtx_factor=row.rxtx_factor,
        vcpu_weight=row.vcpu_weight,
        disabled=bool(row.disabled),
        is_public=bool(row.is_public),
        description=row.description,
        created_at=row.created_at,
        updated_at=row.updated_at,
        extra_specs=dict(specs or {}),
    )


def _shared_with(project_id: str | None) -> sa.ColumnElement[bool]:
    return sa.exists().where(_PROJECTS.c.flavor_id == _F.c.id, _PROJECTS.c.project_id == project_id)


def _visible(viewer: Viewer) -> sa.Select[Any]:
    """Flavors the viewer may see: all for admins, else public or shared with its project."""
    query = sa.select(_F)
    if not viewer.is_admin:
        query = query.where(sa.or_(_F.c.is_public == sa.true(), _shared_with(viewer.project_id)))
    return query


def _filtered(query: sa.Select[Any], filters: FlavorFilters, viewer: Viewer) -> sa.Select[Any]:
    if filters.min_memory_mb is not None:
        query = query.where(_F.c.memory_mb >= filters.min_memory_mb)
    if filters.min_root_gb is not None:
        query = query.where(_F.c.root_gb >= filters.min_root_gb)
    if filters.disabled is not None:
        query = query.where(_F.c.disabled == filters.disabled)
    if filters.name_regex is not None:
        query = query.where(_F.c.name.regexp_match(filters.name_regex))
    if filters.is_public is not None:
        clause: sa.ColumnElement[bool] = _F.c.is_public == filters.is_public
        if filters.is_public and viewer.project_id is not None:
            clause = sa.or_(clause, _shared_with(viewer.project_id))
        query = query.where(clause)
    return query


def _after_marker(keys: Sequence[str], marker: sa.Row[Any], descending: bool) -> Any:
    """Rows strictly after ``marker`` in (keys...) order; NULL marker values are skipped as
    oslo.db's paginate_query does (the trailing ``id`` key keeps the order total)."""
    criteria = []
    for i, key in enumerate(keys):
        value = getattr(marker, key)
        if value is None:
            continue
        equal = [
            _F.c[keys[j]] == getattr(marker, keys[j])
            for j in range(i)
            if getattr(marker, keys[j]) is not None
        ]
        column: Any = _F.c[key]
        if isinstance(value, bool):
            column, value = sa.cast(column, sa.Integer), int(value)
        step = column < value if descending else column > value
        criteria.append(sa.and_(*equal, step))
    return sa.or_(*criteria)


class FlavorRepository:
    """Flavor rows, extra specs and access lists in the API database."""

    def __init__(self, engine: sa.Engine) -> None:
        self._engine = engine
        self._reader = reader(engine)

    def find(
        self, viewer: Viewer, filters: FlavorFilters, page: FlavorPage, with_specs: bool
    ) -> list[Flavor]:
        """Visible flavors matching ``filters``, ordered and paged as ``page`` says."""
        keys = [page.sort_key, "id"]
        descending = page.sort_dir == "desc"
        order = sa.desc if descending else sa.asc
        if filters.name_regex is not None and self._engine.dialect.name == "mysql":
            # MySQL's REGEXP rejects a bare "|"; Nova escapes every one of them.
            filters = replace(filters, name_regex=filters.name_regex.replace("|", "\\|"))
        query = _filtered(_visible(viewer), filters, viewer)
        with self._reader.connect() as conn:
            if page.marker is not None:
                marker = conn.execute(
                    _visible(viewer).where(_F.c.flavorid == page.marker).limit(1)
                ).first()
                if marker is None:
                    raise marker_not_found(page.marker)
                query = query.where(_after_marker(keys, marker, descending))
            query = query.order_by(*(order(_F.c[key]) for key in keys))
            if page.limit is not None:
                query = query.limit(page.limit)
            rows = conn.execute(query).all()
            specs = self._specs_of(conn, [r.id for r in rows]) if with_specs and rows else {}
        return [_to_flavor(row, specs.get(row.id)) for row in rows]

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
            taken = conn.execute(sa.select(_F.c.id).where(_F.c.flavorid == new.flavorid)).first()
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
            found = conn.execute(
                sa.select(_F.c.id).where(_F.c.flavorid == flavorid).order_by(_F.c.id).limit(1)
            ).first()
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
        row = conn.execute(
            _visible(viewer).where(_F.c.flavorid == flavorid).order_by(_F.c.id).limit(1)
        ).first()
        if row is None:
            raise flavor_not_found(flavorid)
        return _to_flavor(row, self._specs_of(conn, [row.id]).get(row.id))

    @staticmethod
    def _specs_of(conn: sa.Connection, flavor_pks: Iterable[int]) -> dict[int, dict[str, str]]:
        found: dict[int, dict[str, str]] = {}
        query = sa.select(_SPECS.c.flavor_id, _SPECS.c.key, _SPECS.c.value).where(
            _SPECS.c.flavor_id.in_(list(flavor_pks))
        )
        for flavor_pk, key, value in conn.execute(query.order_by(_SPECS.c.id)):
            found.setdefault(flavor_pk, {})[key] = value
        return found

    @staticmethod
    def _projects(conn: sa.Connection, flavor_pk: int) -> list[str]:
        query = (
            sa.select(_PROJECTS.c.project_id)
            .where(_PROJECTS.c.flavor_id == flavor_pk)
            .order_by(_PROJECTS.c.id)
        )
        return list(conn.execute(query).scalars())

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
