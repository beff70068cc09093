"""Rows of the embedded volume service: volumes, snapshots, attachments, volume types (tables in
:mod:`openkeel.db.volume_tables`).

The service (:mod:`openkeel.volume.embedded.service`) holds Cinder's rules; this module only
reads and writes rows. A record is a dict of its columns, JSON columns decoded. Status changes
are compare-and-swap (:meth:`VolumeStore.swap`): the caller names the statuses it expects and
learns whether it won.
"""

from __future__ import annotations

import contextlib
import datetime
from collections.abc import Collection, Mapping
from typing import Any

import sqlalchemy as sa

from openkeel.db.engine import reader
from openkeel.db.json_columns import decoded, encoded
from openkeel.db.volume_tables import (
    attachments_table,
    install_tables,
    snapshots_table,
    types_table,
    volumes_table,
)

Row = dict[str, Any]
TABLES: dict[str, sa.Table] = {
    "volumes": volumes_table,
    "snapshots": snapshots_table,
    "attachments": attachments_table,
    "types": types_table,
}
_JSON: dict[str, Any] = {
    "metadata": {}, "image_metadata": {}, "connector": {}, "extra_specs": {},
}  # fmt: skip
# Cinder's own default type (made by its first migration): every volume store has it.
DEFAULT_TYPE: dict[str, Any] = {
    "id": "a7b7c36a-3b7e-4d3b-9b26-6f6c3b6e0d57",
    "name": "__DEFAULT__",
    "description": "Default Volume Type",
    "is_public": True,
}


def now() -> datetime.datetime:
    """Naive UTC with microseconds (as Cinder shows its time stamps)."""
    return datetime.datetime.now(datetime.UTC).replace(tzinfo=None)


class VolumeStore:
    """The volume rows on the API database."""

    def __init__(self, engine: sa.Engine) -> None:
        self._engine = engine

    def install(self) -> None:
        """The tables, and the default volume type in them."""
        install_tables(self._engine)
        if self.get("types", DEFAULT_TYPE["id"]) is None:
            with contextlib.suppress(sa.exc.IntegrityError):  # another process made it first
                self.insert("types", {**DEFAULT_TYPE, "extra_specs": {}})

    def insert(self, kind: str, values: Mapping[str, Any]) -> Row:
        row = {"created_at": now(), **values}
        with self._engine.begin() as conn:
            conn.execute(TABLES[kind].insert().values(**encoded(row, _JSON)))
        found = self.get(kind, str(values["id"]))
        assert found is not None
        return found

    def get(self, kind: str, ident: str) -> Row | None:
        table = TABLES[kind]
        with reader(self._engine).connect() as conn:
            row = conn.execute(table.select().where(table.c.id == ident)).first()
        return None if row is None else decoded(row, _JSON)

    def list(self, kind: str, **equal: Any) -> list[Row]:
        """Rows whose columns equal the given values (None: not filtered), oldest first."""
        table = TABLES[kind]
        clauses = [table.c[k] == v for k, v in equal.items() if v is not None]
        query = table.select().where(*clauses).order_by(table.c.created_at, table.c.id)
        with reader(self._engine).connect() as conn:
            return [decoded(row, _JSON) for row in conn.execute(query)]

    def update(self, kind: str, ident: str, values: Mapping[str, Any]) -> Row | None:
        """Set columns; None when the row is gone."""
        return self.swap(kind, ident, None, values)

    def swap(
        self,
        kind: str,
        ident: str,
        expected: Collection[str] | None,
        values: Mapping[str, Any],
    ) -> Row | None:
        """Set columns when the row's status is one of ``expected`` (None: any); the new row,
        or None when it is gone or another change won."""
        table = TABLES[kind]
        query = table.update().where(table.c.id == ident)
        if expected is not None:
            query = query.where(table.c.status.in_(list(expected)))
        with self._engine.begin() as conn:
            if not conn.execute(query.values(**encoded(values, _JSON), updated_at=now())).rowcount:
                return None
        return self.get(kind, ident)

    def delete(self, kind: str, ident: str) -> bool:
        table = TABLES[kind]
        with self._engine.begin() as conn:
            return bool(conn.execute(table.delete().where(table.c.id == ident)).rowcount)
