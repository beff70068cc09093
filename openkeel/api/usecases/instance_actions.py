"""Instance actions use cases: list a server's actions (2.58 paging and time filters) and show
one action with its events, with Nova's policy targets, visibility and messages.

Called by the os-instance-actions handlers. Actions live in the server's cell DB; a server only
known by its build request has none yet. From 2.21 deleted servers are visible too.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from openkeel.api.context import RequestContext
from openkeel.api.services import ApiServices
from openkeel.db.engine import reader
from openkeel.db.repositories import build_requests, instance_mappings, instances
from openkeel.db.repositories import instance_actions as repo
from openkeel.domain.actions import ActionEvent, InstanceAction
from openkeel.domain.errors import Invalid, NotFound
from openkeel.domain.instances import Instance, InstanceNotFound

POLICY = "os_compute_api:os-instance-actions:%s"


@dataclass(frozen=True)
class ActionPage:
    """2.58+ list parameters (``limit`` already bounded by ``[api] max_limit``)."""

    limit: int
    marker: str | None = None
    changes_since: datetime | None = None
    changes_before: datetime | None = None


@dataclass(frozen=True)
class EventView:
    """What the caller may see of the events (decided by policy and microversion)."""

    traceback: bool
    host: bool


@dataclass(frozen=True)
class ActionDetail:
    """An action, its events (None: hidden by policy), and the server's project."""

    action: InstanceAction
    events: list[ActionEvent] | None
    view: EventView
    details: bool
    instance_project_id: str


class ActionMarkerMissing(Invalid):
    """Nova looks the marker up, then formats the lookup's result (None) into its message."""

    def __init__(self) -> None:
        super().__init__("Marker None could not be found.")


def parse_time(value: str) -> datetime:
    """An ISO 8601 time as naive UTC (Nova's ``normalize_time``)."""
    parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return parsed.astimezone(UTC).replace(tzinfo=None) if parsed.tzinfo else parsed


def _reversed_window(page: ActionPage) -> bool:
    since, before = page.changes_since, page.changes_before
    return since is not None and before is not None and before < since


@dataclass(frozen=True)
class _Located:
    instance: Instance
    cell_uuid: str | None


class InstanceActionService:
    """Reads instance actions for one caller."""

    def __init__(self, services: ApiServices, context: RequestContext) -> None:
        self._services = services
        self._context = context

    def _locate(self, server_id: str, with_deleted: bool) -> _Located:
        with reader(self._services.api_db).connect() as api:
            try:
                mapping = instance_mappings.get(api, server_id)
            except InstanceNotFound:
                raise InstanceNotFound(server_id) from None
            request = None if mapping.cell_uuid else build_requests.find(api, server_id)
            if mapping.cell_uuid is None and request is None:  # scheduled between the reads
                mapping = instance_mappings.get(api, server_id)
        if mapping.cell_uuid is None:
            if request is None:
                raise InstanceNotFound(server_id)
            located = _Located(request.instance, None)
        else:
            engine = (self._services.cell_dbs or {}).get(mapping.cell_uuid)
            if engine is None:
                raise InstanceNotFound(server_id)
            with reader(engine).connect() as conn:
                found = instances.get(conn, server_id, read_deleted="yes" if with_deleted else "no")
            located = _Located(found, mapping.cell_uuid)
        if not self._context.is_admin and located.instance.project_id != self._context.project_id:
            raise InstanceNotFound(server_id)
        return located

    def _authorize(self, rule: str, inst: Instance, fatal: bool = True) -> bool:
        return self._context.can(POLICY % rule, {"project_id": inst.project_id}, fatal=fatal)

    def list_actions(
        self, server_id: str, *, with_deleted: bool, page: ActionPage | None
    ) -> list[InstanceAction]:
        """The server's actions, newest first (all of them before 2.58: ``page`` None)."""
        located = self._locate(server_id, with_deleted)
        self._authorize("list", located.instance)
        if page is not None and _reversed_window(page):
            raise Invalid(
                "The value of changes-since must be less than or equal to changes-before."
            )
        if located.cell_uuid is None:
            if page is not None and page.marker is not None and page.limit != 0:
                raise ActionMarkerMissing()
            return []
        uuid = located.instance.uuid
        with reader(self._services.cell_dbs[located.cell_uuid]).connect() as conn:
            if page is None:
                return repo.list_actions(conn, uuid)
            if page.limit == 0:
                return []
            if page.marker is not None and repo.get_action(conn, uuid, page.marker) is None:
                raise ActionMarkerMissing()
            return repo.list_actions(
                conn,
                uuid,
                limit=page.limit,
                marker=page.marker,
                changes_since=page.changes_since,
                changes_before=page.changes_before,
            )

    def show_action(
        self, server_id: str, request_id: str, *, with_deleted: bool, version_at: Any
    ) -> ActionDetail:
        """One action; events when policy or the microversion (2.51) allows.

        ``version_at`` is ``ApiRequest.at_least`` (a microversion predicate).
        """
        located = self._locate(server_id, with_deleted)
        inst = located.instance
        self._authorize("show", inst)
        action = self._find(located, request_id)
        if self._authorize("events", inst, fatal=False):
            view = EventView(traceback=True, host=bool(version_at("2.62")))
        elif version_at("2.51"):
            view = EventView(traceback=False, host=False)
        else:
            return ActionDetail(action, None, EventView(False, False), False, inst.project_id)
        details = bool(version_at("2.84")) and self._authorize("events:details", inst, False)
        assert located.cell_uuid is not None
        with reader(self._services.cell_dbs[located.cell_uuid]).connect() as conn:
            events = repo.list_events(conn, action.id)
        return ActionDetail(action, events, view, details, inst.project_id)

    def _find(self, located: _Located, request_id: str) -> InstanceAction:
        action = None
        if located.cell_uuid is not None:
            with reader(self._services.cell_dbs[located.cell_uuid]).connect() as conn:
                action = repo.get_action(conn, located.instance.uuid, request_id)
        if action is None:
            raise NotFound(f"Action {request_id} not found")
        return action
