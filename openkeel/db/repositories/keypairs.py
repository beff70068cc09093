"""SQL for key pairs (the API database's ``key_pairs`` table), used by the key pair use case.

Every method is one statement so that the API stays at one or two queries per request:
listing checks the paging marker in the same query, and the quota figures a create needs
(the user's key count and the stored limits) come back from one SELECT of scalar subqueries.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
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


def _to_keypair(row: sa.Row[Any]) -> KeyPair:
    return KeyPair(
        id=row.id,
        name=row.name,
        user_id=row.user_id,
        fingerprint=row.fingerprint,
        public_key=row.public_key,
        type=row.type,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


def _limit_subquery(table: sa.Table, *conditions: sa.ColumnElement[bool]) -> Any:
    return (
        sa.select(table.c.hard_limit)
        .where(*conditions)
        .order_by(table.c.id.desc())
        .limit(1)
        .scalar_subquery()
    )


class KeyPairRepository:
    """Key pairs of one API database."""

    def __init__(self, engine: sa.Engine) -> None:
        self._engine = engine
        self._reader = reader(engine)

    def get(self, user_id: str, name: str) -> KeyPair | None:
        """The key pair ``name`` of ``user_id``, or None."""
        query = sa.select(*_COLUMNS).where(_KP.c.user_id == user_id, _KP.c.name == name)
        with self._reader.connect() as conn:
            row = conn.execute(query).first()
        return _to_keypair(row) if row is not None else None

    def list(
        self, user_id: str, limit: int | None = None, marker: str | None = None
    ) -> list[KeyPair] | None:
        """The user's key pairs by name, after ``marker`` (exclusive), at most ``limit``.

        None when ``marker`` names no key pair of the user.
        """
        query = sa.select(*_COLUMNS).where(_KP.c.user_id == user_id).order_by(_KP.c.name)
        if marker is None:
            if limit is not None:
                query = query.limit(limit)
            with self._reader.connect() as conn:
                return [_to_keypair(r) for r in conn.execute(query)]
        # The marker row sorts first among names >= marker; the database says whether it
        # equals the marker, so its collation decides, as in a separate lookup.
        query = query.add_columns((_KP.c.name == marker).label("is_marker"))
        query = query.where(_KP.c.name >= marker)
        if limit is not None:
            query = query.limit(limit + 1)
        with self._reader.connect() as conn:
            rows: Sequence[sa.Row[Any]] = conn.execute(query).all()
        if not rows or not rows[0].is_marker:
            return None
        return [_to_keypair(r) for r in rows[1:]]

    def quota_figures(
        self, owner_id: str, project_id: str | None, user_id: str | None, resource: str
    ) -> KeyPairQuotaFigures:
        """``owner_id``'s key count and the ``resource`` limits of ``user_id`` in
        ``project_id``: per user, per project and the default quota class."""
        puq = api_schema.project_user_quotas
        quotas = api_schema.quotas
        classes = api_schema.quota_classes
        query = sa.select(
            sa.select(sa.func.count())
            .select_from(_KP)
            .where(_KP.c.user_id == owner_id)
            .scalar_subquery(),
            _limit_subquery(
                puq,
                puq.c.project_id == project_id,
                puq.c.user_id == user_id,
                puq.c.resource == resource,
            ),
            _limit_subquery(
                quotas, quotas.c.project_id == project_id, quotas.c.resource == resource
            ),
            _limit_subquery(
                classes, classes.c.class_name == DEFAULT_QUOTA_CLASS, classes.c.resource == resource
            ),
        )
        with self._reader.connect() as conn:
            in_use, user_limit, project_limit, default_limit = conn.execute(query).one()
        return KeyPairQuotaFigures(int(in_use), user_limit, project_limit, default_limit)

    def count(self, user_id: str) -> int:
        """How many key pairs ``user_id`` has."""
        query = sa.select(sa.func.count()).select_from(_KP).where(_KP.c.user_id == user_id)
        with self._reader.connect() as conn:
            return int(conn.execute(query).scalar_one())

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
                result = conn.execute(_KP.insert().values(**values))
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
        query = _KP.delete().where(_KP.c.user_id == user_id, _KP.c.name == name)
        with self._engine.begin() as conn:
            return conn.execute(query).rowcount > 0
