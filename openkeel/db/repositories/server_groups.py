"""SQL behind server groups: the API DB tables ``instance_groups``, ``instance_group_policy``
(one policy row per group, with its JSON rules) and ``instance_group_member``, and the cell
look-ups that tell which members still exist. Called by
``openkeel.api.usecases.server_groups``; creation runs on the quota claim's connection.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import sqlalchemy as sa

from openkeel.db.schema import api as api_tables
from openkeel.db.schema import cell as cell_tables
from openkeel.domain.server_groups import ServerGroup

_GROUPS = api_tables.instance_groups
_POLICY = api_tables.instance_group_policy
_MEMBERS = api_tables.instance_group_member


def _rules(text: str | None) -> dict[str, Any]:
    return dict(json.loads(text)) if text else {}


class ServerGroupRepository:
    """Server groups over one API database engine."""

    def __init__(self, engine: sa.Engine) -> None:
        self._engine = engine

    @staticmethod
    def create(
        conn: sa.Connection,
        group: ServerGroup,
        legacy_policy: bool,
    ) -> None:
        """Insert ``group`` (no members); ``legacy_policy`` stores NULL rules as before 2.64."""
        key = conn.execute(
            sa.insert(_GROUPS).values(
                uuid=group.uuid,
                name=group.name,
                project_id=group.project_id,
                user_id=group.user_id,
            )
        ).inserted_primary_key
        assert key is not None
        rules = None if legacy_policy else json.dumps(group.rules)
        conn.execute(sa.insert(_POLICY).values(group_id=key[0], policy=group.policy, rules=rules))

    def get(self, uuid: str, project_id: str | None = None) -> ServerGroup | None:
        """The group with this uuid, or None; with ``project_id``, only a group of that project
        (another project's group is as absent as a random uuid, as in Nova for non-admins)."""
        where = _GROUPS.c.uuid == uuid
        if project_id is not None:
            where = sa.and_(where, _GROUPS.c.project_id == project_id)
        with self._engine.connect() as conn:
            found = self._load(conn, where)
        return found[0] if found else None

    def list_groups(self, project_id: str | None) -> list[ServerGroup]:
        """The groups of one project (every group when ``project_id`` is None), by id."""
        where = sa.true() if project_id is None else _GROUPS.c.project_id == project_id
        with self._engine.connect() as conn:
            return self._load(conn, where)

    @staticmethod
    def _load(conn: sa.Connection, where: sa.ColumnElement[bool]) -> list[ServerGroup]:
        rows = conn.execute(sa.select(_GROUPS).where(where).order_by(_GROUPS.c.id)).all()
        ids = [row.id for row in rows]
        policies: dict[int, tuple[str | None, str | None]] = {}
        members: dict[int, list[str]] = {i: [] for i in ids}
        if ids:
            for gid, policy, rules in conn.execute(
                sa.select(_POLICY.c.group_id, _POLICY.c.policy, _POLICY.c.rules)
                .where(_POLICY.c.group_id.in_(ids))
                .order_by(_POLICY.c.id)
            ):
                policies.setdefault(gid, (policy, rules))
            for gid, uuid in conn.execute(
                sa.select(_MEMBERS.c.group_id, _MEMBERS.c.instance_uuid)
                .where(_MEMBERS.c.group_id.in_(ids))
                .order_by(_MEMBERS.c.id)
            ):
                members[gid].append(uuid)
        return [
            ServerGroup(
                uuid=row.uuid,
                name=row.name,
                project_id=row.project_id,
                user_id=row.user_id,
                policy=policies.get(row.id, (None, None))[0],
                rules=_rules(policies.get(row.id, (None, None))[1]),
                members=tuple(members[row.id]),
            )
            for row in rows
        ]

    def delete(self, uuid: str) -> bool:
        """Delete a group with its policy and member rows; False when absent."""
        with self._engine.begin() as conn:
            gid = conn.execute(sa.select(_GROUPS.c.id).where(_GROUPS.c.uuid == uuid)).scalar()
            if gid is None:
                return False
            conn.execute(sa.delete(_MEMBERS).where(_MEMBERS.c.group_id == gid))
            conn.execute(sa.delete(_POLICY).where(_POLICY.c.group_id == gid))
            conn.execute(sa.delete(_GROUPS).where(_GROUPS.c.id == gid))
        return True

    def member_cells(self, uuids: Iterable[str]) -> dict[str, str | None]:
        """Cell uuid (None while not scheduled) of each member that has an instance mapping."""
        wanted = sorted(set(uuids))
        if not wanted:
            return {}
        mappings, cells = api_tables.instance_mappings, api_tables.cell_mappings
        query = (
            sa.select(mappings.c.instance_uuid, cells.c.uuid)
            .select_from(mappings.outerjoin(cells, cells.c.id == mappings.c.cell_id))
            .where(mappings.c.instance_uuid.in_(wanted))
        )
        with self._engine.connect() as conn:
            return {str(i): (None if c is None else str(c)) for i, c in conn.execute(query)}


def live_instances(engine: sa.Engine, uuids: Sequence[str]) -> set[str]:
    """Which of ``uuids`` are live (not deleted) instances of one cell."""
    if not uuids:
        return set()
    table = cell_tables.instances
    query = sa.select(table.c.uuid).where(table.c.uuid.in_(list(uuids)), table.c.deleted == 0)
    with engine.connect() as conn:
        return {str(u) for u in conn.execute(query).scalars()}


def minimum_compute_version(engines: Mapping[str, sa.Engine]) -> int:
    """The lowest non-zero nova-compute service version across cells (0 when none report)."""
    table = cell_tables.services
    query = sa.select(sa.func.min(table.c.version)).where(
        table.c.binary == "nova-compute", table.c.deleted == 0, table.c.version > 0
    )
    versions = []
    for engine in engines.values():
        with engine.connect() as conn:
            found = conn.execute(query).scalar()
        if found:
            versions.append(int(found))
    return min(versions) if versions else 0
