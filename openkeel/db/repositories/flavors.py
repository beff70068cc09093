"""SQL for flavors, their extra specs and project access (API database), used by the flavor
use cases.

A flavor list is one SELECT (visibility, filters, keyset paging) plus, when the caller wants
extra specs, one SELECT of the specs of the same page (a join on the page query); never a
query per flavor. The statements come from ``flavor_queries`` (built once per query shape,
values bound at execution); rows are unpacked positionally (columns are selected in the
order of the entity's fields).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import fields, replace
from typing import Any

import sqlalchemy as sa

from openkeel.db import regex_filters
from openkeel.db.engine import reader
from openkeel.db.repositories import flavor_queries as q
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
_FIELDS = tuple(field.name for field in fields(Flavor))
_new = object.__new__


def _to_flavor(row: Sequence[Any], specs: dict[str, str] | None = None) -> Flavor:
    (pk, flavorid, name, memory_mb, vcpus, root_gb, ephemeral_gb, swap) = row[:8]
    (rxtx_factor, vcpu_weight, disabled, is_public, description, created, updated) = row[8:]
    values = (
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
    # The frozen dataclass's __init__ (one object.__setattr__ per field) costs 3x this on
    # a 100-flavor page; the result is the same object.
    flavor: Flavor = _new(Flavor)
    flavor.__dict__.update(zip(_FIELDS, values, strict=True))
    return flavor


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
        self._reader = reader(engine)  # made once per engine by reader()

    def find(
        self, viewer: Viewer, filters: FlavorFilters, page: FlavorPage, with_specs: bool
    ) -> list[Flavor]:
        """Visible flavors matching ``filters``, ordered and paged as ``page`` says; a name
        pattern the database refuses is a 400 (``RegexFilterRefused``), never a 500."""
        if filters.name_regex is None:
            return self._find(viewer, filters, page, with_specs)
        pattern = filters.name_regex
        sent = regex_filters.for_database(self._engine.dialect.name, pattern)
        with regex_filters.refused_patterns_as_invalid(self._engine, {"name": pattern}):
            return self._find(viewer, replace(filters, name_regex=sent), page, with_specs)

    def _find(
        self, viewer: Viewer, filters: FlavorFilters, page: FlavorPage, with_specs: bool
    ) -> list[Flavor]:
        shape = q.shape_of(viewer, filters, page)
        params = q.list_params(viewer, filters, page)
        with self._reader.connect() as conn:
            if page.marker is not None:
                marker = conn.execute(
                    q.MARKER_ROW[viewer.is_admin],
                    {"project_id": viewer.project_id, "flavorid": page.marker},
                ).first()
                if marker is None:
                    raise marker_not_found(page.marker)
                keys = (page.sort_key, "id")
                shape = shape._replace(
                    marker=tuple(marker[q.POSITION[key]] is not None for key in keys)
                )
                params.update(q.marker_params(keys, marker))
            rows = conn.execute(q.list_statement(shape), params).all()
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
            taken = conn.execute(q.ID_BY_FLAVORID, {"flavorid": new.flavorid}).first()
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
            found = conn.execute(q.ID_BY_FLAVORID, {"flavorid": flavorid}).first()
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
        row = conn.execute(q.GET_VISIBLE[viewer.is_admin], params).first()
        if row is None:
            raise flavor_not_found(flavorid)
        specs = _grouped(conn.execute(q.SPECS_OF_ONE, {"flavor_pk": row[0]}))
        return _to_flavor(row, specs.get(row[0]))

    @staticmethod
    def _page_specs(
        conn: sa.Connection, shape: q.ListShape, params: Mapping[str, Any]
    ) -> dict[int, dict[str, str]]:
        return _grouped(conn.execute(q.page_specs_statement(shape), params))

    @staticmethod
    def _projects(conn: sa.Connection, flavor_pk: int) -> list[str]:
        return list(conn.execute(q.PROJECTS_OF, {"flavor_pk": flavor_pk}).scalars())

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
