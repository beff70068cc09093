"""Server group use cases: list (own project, or all with ``all_projects`` for admins), show,
create within the ``server_groups`` quota, delete; with Nova's policy targets and messages.
Called by the os-server-groups handlers. Members are written by the servers flow; here they
are only read, and only those still alive are shown.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from openkeel.api.context import RequestContext
from openkeel.api.services import ApiServices
from openkeel.api.usecases.quotas import QuotaEngine
from openkeel.db.repositories import server_groups as repo
from openkeel.domain.errors import Conflict, Invalid, NotFound
from openkeel.domain.server_groups import (
    ANTI_AFFINITY,
    CUSTOM_MAX_SERVER_RULES_VERSION,
    MAX_SERVER_PER_HOST,
    ServerGroup,
)

POLICY_ROOT = "os_compute_api:os-server-groups:%s"
OVER_QUOTA_MESSAGE = "Quota exceeded, too many server groups."


@dataclass(frozen=True)
class CreateServerGroup:
    """A create request: ``legacy`` is True before 2.64 (``policies`` list, no rules)."""

    name: str
    policy: str
    rules: dict[str, Any] = field(default_factory=dict)
    legacy: bool = False


@dataclass(frozen=True)
class Page:
    """Nova's ``limit``/``offset`` paging of the listing."""

    offset: int = 0
    limit: int | None = None


class ServerGroupService:
    """Server groups as seen by one caller."""

    def __init__(self, services: ApiServices, context: RequestContext) -> None:
        self._services = services
        self._repo = repo.ServerGroupRepository(services.api_db)
        self._cell_dbs: Mapping[str, sa.Engine] = services.cell_dbs or {}
        self._max_limit = int(services.conf.api.max_limit)
        self._context = context
        self._notifier = services.notifier

    def list_groups(self, all_projects: bool, page: Page) -> list[ServerGroup]:
        """The caller's project's groups, or every group for an admin asking for all."""
        project = self._context.project_id
        self._context.can(POLICY_ROOT % "index", target={"project_id": project})
        if all_projects and self._context.is_admin:
            self._context.can(POLICY_ROOT % "index:all_projects", target={"project_id": project})
            groups = self._repo.list_groups(None)
        else:
            groups = self._repo.list_groups(project or "")
        limit = min(self._max_limit, page.limit or self._max_limit)
        shown = groups[page.offset : page.offset + limit]
        alive = self._alive(m for g in shown for m in g.members)
        return [self._visible(g, alive) for g in shown]

    def get(self, group_uuid: str) -> ServerGroup:
        """One group; NotFound before the policy check, as Nova."""
        group = self._find(group_uuid)
        self._context.can(POLICY_ROOT % "show", target={"project_id": group.project_id})
        return self._visible(group, self._alive(group.members))

    def delete(self, group_uuid: str) -> None:
        """Delete a group (its member rows go with it)."""
        group = self._find(group_uuid)
        self._context.can(POLICY_ROOT % "delete", target={"project_id": group.project_id})
        if not self._repo.delete(group.uuid):
            raise self._missing(group_uuid)
        self._notifier.server_group("delete", group)

    def create(self, command: CreateServerGroup) -> ServerGroup:
        """A new group of the caller's project, counted against ``server_groups``."""
        project, user = self._context.project_id or "", self._context.user_id
        self._context.can(POLICY_ROOT % "create", target={"project_id": project})
        group = ServerGroup(
            uuid=str(uuid.uuid4()),
            name=command.name,
            project_id=project,
            user_id=user,
            policy=command.policy,
            rules={} if command.legacy else dict(command.rules),
        )
        engine = QuotaEngine(self._services)
        with engine.claim(project, user, {"server_groups": 1}, message=OVER_QUOTA_MESSAGE) as conn:
            if not command.legacy:
                self._check_rules(command)
            self._repo.create(conn, group, command.legacy)
        self._notifier.server_group("create", group)
        return group

    def _check_rules(self, command: CreateServerGroup) -> None:
        if command.policy != ANTI_AFFINITY and command.rules:
            raise Invalid("Only anti-affinity policy supports rules.")
        wanted = int(command.rules.get(MAX_SERVER_PER_HOST, 1))
        if wanted > 1:
            oldest = repo.minimum_compute_version(self._cell_dbs)
            if oldest < CUSTOM_MAX_SERVER_RULES_VERSION:
                raise Conflict(
                    "Creating an anti-affinity group with rule max_server_per_host > 1 "
                    "is not yet supported."
                )

    def _find(self, group_uuid: str) -> ServerGroup:
        """The group; another project's is not found for a non-admin, as in Nova."""
        ctx = self._context
        group = self._repo.get(group_uuid, None if ctx.is_admin else (ctx.project_id or ""))
        if group is None:
            raise self._missing(group_uuid)
        return group

    @staticmethod
    def _missing(group_uuid: str) -> NotFound:
        return NotFound(f"Instance group {group_uuid} could not be found.")

    def _alive(self, members: Iterable[str]) -> set[str]:
        """Members with an instance mapping that are unscheduled or live in their cell."""
        cells = self._repo.member_cells(members)
        alive = {m for m, cell in cells.items() if cell is None}
        by_cell: dict[str, list[str]] = {}
        for member, cell in cells.items():
            if cell is not None:
                by_cell.setdefault(cell, []).append(member)
        for cell, uuids in by_cell.items():
            engine = self._cell_dbs.get(cell)
            if engine is not None:
                alive |= repo.live_instances(engine, uuids)
        return alive

    @staticmethod
    def _visible(group: ServerGroup, alive: set[str]) -> ServerGroup:
        members = tuple(m for m in group.members if m in alive)
        return ServerGroup(
            group.uuid,
            group.name,
            group.project_id,
            group.user_id,
            group.policy,
            group.rules,
            members,
        )
