"""SQL for key pairs (the API database's ``key_pairs`` table), used by the key pair use case.

Every method is one statement so that the API stays at one or two queries per request:
listing checks the paging marker in the same query, and the quota figures a create needs
(the user's key count and the stored limits) come back from one SELECT of scalar subqueries.
Statements are built once, at import, with bound parameters; rows are unpacked positionally
(the columns are selected in the order of KeyPair's fields).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

import sqlalchemy as sa

from openkeel.db.engine import reader
from openkeel.db.schema import api as api_schema
from openkeel.db.schema.columns import utcnow
from openkeel.domain.errors import Conflict
from openkeel.domain.keypairs import KeyPair

_KP = api_schema.key_pairs
_COLUMNS = (
    _KP.c.id,
    _KP.c.name,
    _KP.c.user_id,
    _KP.c.fingerprint,
    _KP.c.public_key,
    _KP.c.type,
    _KP.c.created_at,
    _KP.c.updated_at,
)
_FIELDS = tuple(field.name for field in fields(KeyPair))
_new = object.__new__
DEFAULT_QUOTA_CLASS = "default"


@dataclass(frozen=True)
class KeyPairQuotaFigures:
    """What a key pair quota check needs: the user's key count and the stored limits
    (None where no row sets one)."""

    in_use: int
    user_limit: int | None
    project_limit: int | None
    default_limit: int | None


@dataclass(frozen=True)
class NewKeyPair:
    """The values of a key pair to insert."""

    name: str
    user_id: str
    type: str
    public_key: str
    fingerprint: str


def _to_keypair(row: Sequence[Any]) -> KeyPair:
    # Same object as KeyPair(*row), without the frozen dataclass's per-field __setattr__.
    keypair: KeyPair = _new(KeyPair)
    keypair.__dict__.update(zip(_FIELDS, row, strict=True))
    return keypair


def _limit_subquery(table: sa.Table, *conditions: sa.ColumnElement[bool]) -> Any:
    return (
        sa.select(table.c.hard_limit)
        .where(*conditions)
        .order_by(table.c.id.desc())
        .limit(1)
        .scalar_subquery()
    )


def _equals(column: sa.Column[Any], name: str, null: bool) -> sa.ColumnElement[bool]:
    """``column = :name``, or ``column IS NULL`` for a None value (as ``column == None``)."""
    return column.is_(None) if null else column == sa.bindparam(name, type_=column.type)


@functools.cache
def _quota_figures_statement(project_null: bool, user_null: bool) -> sa.Select[Any]:
    puq = api_schema.project_user_quotas
    quotas = api_schema.quotas
    classes = api_schema.quota_classes
    resource = sa.bindparam("resource", type_=sa.String)
    return sa.select(
        sa.select(sa.func.count())
        .select_from(_KP)
        .where(_KP.c.user_id == _OWNER)
        .scalar_subquery(),
        _limit_subquery(
            puq,
            _equals(puq.c.project_id, "project_id", project_null),
            _equals(puq.c.user_id, "user_id", user_null),
            puq.c.resource == resource,
        ),
        _limit_subquery(
            quotas,
            _equals(quotas.c.project_id, "project_id", project_null),
            quotas.c.resource == resource,
        ),
        _limit_subquery(
            classes, classes.c.class_name == DEFAULT_QUOTA_CLASS, classes.c.resource == resource
        ),
    )


_OWNER = sa.bindparam("owner", type_=_KP.c.user_id.type)
_NAME = sa.bindparam("name", type_=_KP.c.name.type)
_LIMIT = sa.bindparam("limit", type_=sa.Integer)
_MARKER = sa.bindparam("marker", type_=_KP.c.name.type)
_GET = sa.select(*_COLUMNS).where(_KP.c.user_id == _OWNER, _KP.c.name == _NAME)
_LIST = sa.select(*_COLUMNS).where(_KP.c.user_id == _OWNER).order_by(_KP.c.name)
# The marker row sorts first among names >= marker; the database says whether it equals the
# marker, so its collation decides, as in a separate lookup.
_LIST_AFTER = _LIST.add_columns((_KP.c.name == _MARKER).label("is_marker")).where(
    _KP.c.name >= _MARKER
)
_COUNT = sa.select(sa.func.count()).select_from(_KP).where(_KP.c.user_id == _OWNER)
_DELETE = _KP.delete().where(_KP.c.user_id == _OWNER, _KP.c.name == _NAME)
_INSERT = _KP.insert()
_LIST_LIMITED = _LIST.limit(_LIMIT)
_LIST_AFTER_LIMITED = _LIST_AFTER.limit(_LIMIT)


class KeyPairRepository:
    """Key pairs of one API database."""

    def __init__(self, engine: sa.Engine) -> None:
        self._engine = engine
        self._reader = reader(engine)  # made once per engine by reader()

    def get(self, user_id: str, name: str) -> KeyPair | None:
        """The key pair ``name`` of ``user_id``, or None."""
        with self._reader.connect() as conn:
            row = conn.execute(_GET, {"owner": user_id, "name": name}).first()
        return _to_keypair(row) if row is not None else None

    def list(
        self, user_id: str, limit: int | None = None, marker: str | None = None
    ) -> list[KeyPair] | None:
        """The user's key pairs by name, after ``marker`` (exclusive), at most ``limit``.

        None when ``marker`` names no key pair of the user.
        """
        if marker is None:
            query, params = _LIST, {"owner": user_id, "limit": limit}
            if limit is not None:
                query = _LIST_LIMITED
            with self._reader.connect() as conn:
                return [_to_keypair(row) for row in conn.execute(query, params).all()]
        params = {"owner": user_id, "marker": marker, "limit": None if limit is None else limit + 1}
        query = _LIST_AFTER if limit is None else _LIST_AFTER_LIMITED
        with self._reader.connect() as conn:
            rows: Sequence[sa.Row[Any]] = conn.execute(query, params).all()
        if not rows or not rows[0][-1]:
            return None
        return [_to_keypair(row[:-1]) for row in rows[1:]]

    def quota_figures(
        self, owner_id: str, project_id: str | None, user_id: str | None, resource: str
    ) -> KeyPairQuotaFigures:
        """``owner_id``'s key count and the ``resource`` limits of ``user_id`` in
        ``project_id``: per user, per project and the default quota class."""
        params = {
            "owner": owner_id,
            "project_id": project_id,
            "user_id": user_id,
            "resource": resource,
        }
        with self._reader.connect() as conn:
            query = _quota_figures_statement(project_id is None, user_id is None)
            row = conn.execute(query, params).one()
        in_use, user_limit, project_limit, default_limit = row
        return KeyPairQuotaFigures(int(in_use), user_limit, project_limit, default_limit)

    def count(self, user_id: str) -> int:
        """How many key pairs ``user_id`` has."""
        with self._reader.connect() as conn:
            return int(conn.execute(_COUNT, {"owner": user_id}).scalar_one())

    def create(self, new: NewKeyPair) -> KeyPair:
        """Insert ``new``; Conflict (Nova's message) when the user has that name already."""
        now = utcnow()
        values = {
            "name": new.name,
            "user_id": new.user_id,
            "type": new.type,
            "public_key": new.public_key,
            "fingerprint": new.fingerprint,
            "created_at": now,
        }
        try:
            with self._engine.begin() as conn:
                result = conn.execute(_INSERT, values)
        except sa.exc.IntegrityError as exc:
            raise Conflict(f"Key pair '{new.name}' already exists.") from exc
        primary_key = result.inserted_primary_key
        assert primary_key is not None
        return KeyPair(
            id=int(primary_key[0]),
            name=new.name,
            user_id=new.user_id,
            fingerprint=new.fingerprint,
            public_key=new.public_key,
            type=new.type,
            created_at=now,
        )

    def delete(self, user_id: str, name: str) -> bool:
        """Delete key pair ``name`` of ``user_id``; False when there was none."""
        with self._engine.begin() as conn:
            return conn.execute(_DELETE, {"owner": user_id, "name": name}).rowcount > 0
