"""SQL behind host aggregates: the API DB tables ``aggregates``, ``aggregate_hosts`` and
``aggregate_metadata``, plus the compute-service and instance look-ups in cell DBs that the
aggregate rules need. Called by ``openkeel.api.usecases.aggregates``.

The rows are hard-deleted as Nova does for these API-DB tables (no soft-delete columns); the
``availability_zone`` metadata key is the one ``openkeel.db.repositories.availability_zones``
reads.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Mapping

import sqlalchemy as sa

from openkeel.db.schema import api as api_tables
from openkeel.db.schema import cell as cell_tables
from openkeel.domain.aggregates import AZ_KEY, Aggregate
from openkeel.domain.errors import Conflict

_AGG = api_tables.aggregates
_HOSTS = api_tables.aggregate_hosts
_META = api_tables.aggregate_metadata
# Nova's integer ids are 32-bit; larger values can match nothing.
_MAX_ID = 2**31 - 1


def _name_taken(name: str) -> Conflict:
    return Conflict(f"Aggregate {name} already exists.")


class AggregateRepository:
    """Aggregates with their hosts and metadata, over one API database engine."""

    def __init__(self, engine: sa.Engine) -> None:
        self._engine = engine

    def list_all(self) -> list[Aggregate]:
        """Every aggregate, by id."""
        with self._engine.connect() as conn:
            rows = conn.execute(sa.select(_AGG).order_by(_AGG.c.id)).all()
            return self._load(conn, rows)

    def get(self, aggregate_id: int) -> Aggregate | None:
        """The aggregate with this id, or None."""
        if not 0 <= aggregate_id <= _MAX_ID:
            return None
        with self._engine.connect() as conn:
            return self._get(conn, aggregate_id)

    def _get(self, conn: sa.Connection, aggregate_id: int) -> Aggregate | None:
        rows = conn.execute(sa.select(_AGG).where(_AGG.c.id == aggregate_id)).all()
        found = self._load(conn, rows)
        return found[0] if found else None

    @staticmethod
    def _load(conn: sa.Connection, rows: Iterable[sa.Row[tuple[object, ...]]]) -> list[Aggregate]:
        rows = list(rows)
        ids = [row.id for row in rows]
        hosts: dict[int, list[str]] = {i: [] for i in ids}
        meta: dict[int, dict[str, str]] = {i: {} for i in ids}
        if ids:
            for agg_id, host in conn.execute(
                sa.select(_HOSTS.c.aggregate_id, _HOSTS.c.host)
                .where(_HOSTS.c.aggregate_id.in_(ids))
                .order_by(_HOSTS.c.id)
            ):
                hosts[agg_id].append(host)
            for agg_id, key, value in conn.execute(
                sa.select(_META.c.aggregate_id, _META.c.key, _META.c.value)
                .where(_META.c.aggregate_id.in_(ids))
                .order_by(_META.c.id)
            ):
                meta[agg_id][key] = value
        return [
            Aggregate(
                id=row.id,
                uuid=row.uuid,
                name=row.name,
                hosts=tuple(hosts[row.id]),
                metadata=meta[row.id],
                created_at=row.created_at,
                updated_at=row.updated_at,
            )
            for row in rows
        ]

    def create(self, name: str, uuid: str, metadata: Mapping[str, str]) -> Aggregate:
        """Insert an aggregate; Conflict when the name is taken."""
        with self._engine.begin() as conn:
            if conn.execute(sa.select(_AGG.c.id).where(_AGG.c.name == name)).first():
                raise _name_taken(name)
            try:
                key = conn.execute(
                    sa.insert(_AGG).values(name=name, uuid=uuid)
                ).inserted_primary_key
            except sa.exc.IntegrityError as exc:
                raise _name_taken(name) from exc
            assert key is not None
            self._upsert_metadata(conn, key[0], metadata)
            created = self._get(conn, key[0])
        assert created is not None
        return created

    def rename(self, aggregate_id: int, name: str) -> None:
        """Change the name; Conflict when another aggregate has it."""
        taken = sa.select(_AGG.c.id).where(_AGG.c.name == name, _AGG.c.id != aggregate_id)
        with self._engine.begin() as conn:
            if conn.execute(taken).first():
                raise _name_taken(name)
            try:
                conn.execute(sa.update(_AGG).where(_AGG.c.id == aggregate_id).values(name=name))
            except sa.exc.IntegrityError as exc:
                raise _name_taken(name) from exc

    def update_metadata(self, aggregate_id: int, changes: Mapping[str, str | None]) -> None:
        """Set keys with a value, delete keys whose value is None (others are kept)."""
        removed = [k for k, v in changes.items() if v is None]
        kept = {k: v for k, v in changes.items() if v is not None}
        with self._engine.begin() as conn:
            if removed:
                conn.execute(
                    sa.delete(_META).where(
                        _META.c.aggregate_id == aggregate_id, _META.c.key.in_(removed)
                    )
                )
            self._upsert_metadata(conn, aggregate_id, kept)

    @staticmethod
    def _upsert_metadata(conn: sa.Connection, aggregate_id: int, values: Mapping[str, str]) -> None:
        if not values:
            return
        existing = set(
            conn.execute(
                sa.select(_META.c.key).where(
                    _META.c.aggregate_id == aggregate_id, _META.c.key.in_(list(values))
                )
            ).scalars()
        )
        now = datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
        for key, value in values.items():
            if key in existing:
                conn.execute(
                    sa.update(_META)
                    .where(_META.c.aggregate_id == aggregate_id, _META.c.key == key)
                    .values(value=value, updated_at=now)
                )
            else:
                conn.execute(
                    sa.insert(_META).values(aggregate_id=aggregate_id, key=key, value=value)
                )

    def add_host(self, aggregate_id: int, host: str) -> bool:
        """Add ``host``; False when it is a member already."""
        with self._engine.begin() as conn:
            there = sa.select(_HOSTS.c.id).where(
                _HOSTS.c.aggregate_id == aggregate_id, _HOSTS.c.host == host
            )
            if conn.execute(there).first():
                return False
            try:
                conn.execute(sa.insert(_HOSTS).values(aggregate_id=aggregate_id, host=host))
            except sa.exc.IntegrityError:
                return False
        return True

    def remove_host(self, aggregate_id: int, host: str) -> bool:
        """Remove ``host``; False when it was not a member."""
        with self._engine.begin() as conn:
            gone = conn.execute(
                sa.delete(_HOSTS).where(
                    _HOSTS.c.aggregate_id == aggregate_id, _HOSTS.c.host == host
                )
            )
        return bool(gone.rowcount)

    def delete(self, aggregate_id: int) -> bool:
        """Delete an aggregate and its metadata; False when absent."""
        with self._engine.begin() as conn:
            conn.execute(sa.delete(_META).where(_META.c.aggregate_id == aggregate_id))
            gone = conn.execute(sa.delete(_AGG).where(_AGG.c.id == aggregate_id))
        return bool(gone.rowcount)

    def zones_of_hosts(self, hosts: Iterable[str]) -> list[tuple[int, str]]:
        """(aggregate id, zone) of every aggregate with a zone holding one of ``hosts``."""
        wanted = sorted(set(hosts))
        if not wanted:
            return []
        query = (
            sa.select(_META.c.aggregate_id, _META.c.value)
            .distinct()
            .select_from(_META.join(_HOSTS, _HOSTS.c.aggregate_id == _META.c.aggregate_id))
            .where(_META.c.key == AZ_KEY, _HOSTS.c.host.in_(wanted))
            .order_by(_META.c.aggregate_id)
        )
        with self._engine.connect() as conn:
            return [(int(a), str(z)) for a, z in conn.execute(query)]

    def host_cell(self, host: str) -> str | None:
        """The uuid of the cell ``host`` is mapped to, or None."""
        mappings, cells = api_tables.host_mappings, api_tables.cell_mappings
        query = (
            sa.select(cells.c.uuid)
            .select_from(mappings.join(cells, cells.c.id == mappings.c.cell_id))
            .where(mappings.c.host == host)
        )
        with self._engine.connect() as conn:
            found = conn.execute(query).scalar()
        return None if found is None else str(found)


def compute_service_host(engine: sa.Engine, host: str) -> str | None:
    """The ``host`` value of the live nova-compute service on ``host`` in one cell, or None."""
    table = cell_tables.services
    query = sa.select(table.c.host).where(
        table.c.host == host, table.c.binary == "nova-compute", table.c.deleted == 0
    )
    with engine.connect() as conn:
        found = conn.execute(query).scalar()
    return None if found is None else str(found)


def count_instances_on_hosts(engine: sa.Engine, hosts: Iterable[str]) -> int:
    """Live instances of one cell on any of ``hosts``."""
    wanted = sorted(set(hosts))
    if not wanted:
        return 0
    table = cell_tables.instances
    query = (
        sa.select(sa.func.count())
        .select_from(table)
        .where(table.c.host.in_(wanted), table.c.deleted == 0)
    )
    with engine.connect() as conn:
        return int(conn.execute(query).scalar_one())
