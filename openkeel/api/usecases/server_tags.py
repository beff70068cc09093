"""Server tag use cases (2.26+): list, check, add one, replace all, delete one, delete all,
with Nova's order of checks: instance mapping (404), policy on the mapping's project, vm_state
(409 for changes), tag format (400), at most 50 tags (400).

Called by the server tags handlers. Nova checks no lock here (tags are not guarded by it), so
neither do we. A server still known only by its build request shows the tags it was created
with; changing them is refused (vm_state building).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import jsonschema
import sqlalchemy as sa

from openkeel.api.context import RequestContext
from openkeel.api.services import ApiServices
from openkeel.api.usecases.instance_saves import saves_notifier
from openkeel.db.engine import reader
from openkeel.db.repositories import build_requests, instance_mappings, instances
from openkeel.db.repositories import instance_metadata as repo
from openkeel.db.repositories.instance_mappings import InstanceMapping
from openkeel.domain.errors import Invalid, NotFound
from openkeel.domain.instances import Instance, InstanceNotFound
from openkeel.domain.states import InstanceInvalidState, VmState
from openkeel.notifications.instance_payloads import Initiator

POLICY = "os_compute_api:os-server-tags:%s"
MAX_TAG_COUNT = 50
MAX_TAG_LENGTH = 60
TAG_SCHEMA: dict[str, Any] = {
    "type": "string",
    "pattern": "^[^,/]*$",
    "minLength": 1,
    "maxLength": MAX_TAG_LENGTH,
}
_TAG_VALIDATOR = jsonschema.Draft202012Validator(TAG_SCHEMA)
_TAGGABLE = frozenset({VmState.ACTIVE, VmState.PAUSED, VmState.SUSPENDED, VmState.STOPPED})

T = TypeVar("T")


def check_tag(tag: str) -> None:
    """400 with Nova's message when ``tag`` is not a valid tag."""
    error = next(iter(_TAG_VALIDATOR.iter_errors(tag)), None)
    if error is not None:
        raise Invalid(
            f"Tag '{tag}' is invalid. It must be a non empty string without characters '/' "
            f"and ','. Validation error message: {error.message}"
        )


class ServerTagService:
    """The tags of the servers one caller can see."""

    def __init__(self, services: ApiServices, context: RequestContext) -> None:
        self._services = services
        self._context = context

    def _mapping(self, server_id: str, rule: str) -> InstanceMapping:
        with reader(self._services.api_db).connect() as api:
            mapping = instance_mappings.get(api, server_id)
        self._context.can(POLICY % rule, {"project_id": mapping.project_id})
        return mapping

    def _visible(self, inst: Instance) -> Instance:
        if not self._context.is_admin and inst.project_id != self._context.project_id:
            raise InstanceNotFound(inst.uuid)
        return inst

    def _read(self, mapping: InstanceMapping, fn: Callable[[sa.Connection], T]) -> T | None:
        """``fn`` on the server's cell, None when only the build request exists."""
        if mapping.cell_uuid is None:
            return None
        engine = self._engine(mapping)
        with reader(engine).connect() as conn:
            self._visible(instances.get(conn, mapping.instance_uuid))
            return fn(conn)

    def _engine(self, mapping: InstanceMapping) -> sa.Engine:
        engine = (self._services.cell_dbs or {}).get(mapping.cell_uuid or "")
        if engine is None:
            raise InstanceNotFound(mapping.instance_uuid)
        return engine

    def _build_tags(self, mapping: InstanceMapping) -> list[str]:
        with reader(self._services.api_db).connect() as api:
            request = build_requests.find(api, mapping.instance_uuid)
        if request is None:
            raise InstanceNotFound(mapping.instance_uuid)
        return sorted(self._visible(request.instance).tags)

    def list_tags(self, server_id: str) -> list[str]:
        """GET .../tags."""
        mapping = self._mapping(server_id, "index")
        found = self._read(mapping, lambda conn: repo.get_tags(conn, server_id))
        return found if found is not None else self._build_tags(mapping)

    def check(self, server_id: str, tag: str) -> None:
        """GET .../tags/{tag}: nothing when present, 404 otherwise."""
        mapping = self._mapping(server_id, "show")
        found = self._read(mapping, lambda conn: repo.get_tags(conn, server_id))
        tags = found if found is not None else self._build_tags(mapping)
        if tag not in tags:
            raise NotFound(f"Server {server_id} has no tag '{tag}'")

    def _write(self, server_id: str, rule: str, action: str, fn: Callable[[sa.Connection], T]) -> T:
        mapping = self._mapping(server_id, rule)
        if mapping.cell_uuid is None:
            with self._services.api_db.connect() as api:
                request = build_requests.find(api, server_id)
            if request is None:
                raise InstanceNotFound(server_id)
            self._gate(self._visible(request.instance), action)
        with self._engine(mapping).begin() as conn:
            self._gate(self._visible(instances.get(conn, server_id)), action)
            done = fn(conn)
        self._notify(mapping)
        return done

    def _notify(self, mapping: InstanceMapping) -> None:
        """``instance.update`` with the new tags, as Nova's server tags API sends it
        (``send_instance_update_notification``, publisher ``nova-api``), whatever
        ``notify_on_state_change`` says."""
        notifier = self._services.notifier
        if not notifier.enabled:
            return
        with self._engine(mapping).connect() as conn:
            inst = instances.get(conn, mapping.instance_uuid)
        ctx = self._context
        who = Initiator(ctx.request_id, ctx.user_id, ctx.project_id)
        period = saves_notifier(self._services, ctx).audit_period()
        notifier.prepare("nova-api", notifier.host).instance_update(inst, inst, who, period, always=True)  # fmt: skip

    @staticmethod
    def _gate(inst: Instance, action: str) -> None:
        if inst.vm_state not in _TAGGABLE:
            raise InstanceInvalidState(action, inst.uuid, "vm_state", inst.vm_state)

    def add(self, server_id: str, tag: str) -> bool:
        """PUT .../tags/{tag}: True when added, False when the server had it already."""

        def add(conn: sa.Connection) -> bool:
            check_tag(tag)
            current = repo.get_tags(conn, server_id)
            if len(current) >= MAX_TAG_COUNT:
                raise Invalid(f"The number of tags exceeded the per-server limit {MAX_TAG_COUNT}")
            return repo.add_tag(conn, server_id, tag)

        return self._write(server_id, "update", "update tag", add)

    def replace(self, server_id: str, tags: Sequence[str]) -> list[str]:
        """PUT .../tags: the given tags become all the tags (sorted, duplicates dropped)."""
        return self._write(
            server_id,
            "update_all",
            "update tags",
            lambda conn: repo.set_tags(conn, server_id, tags),
        )

    def delete(self, server_id: str, tag: str) -> None:
        """DELETE .../tags/{tag} (404 "Instance X has no tag 'Y'")."""
        self._write(
            server_id, "delete", "delete tag", lambda conn: repo.delete_tag(conn, server_id, tag)
        )

    def delete_all(self, server_id: str) -> None:
        """DELETE .../tags."""
        self._write(
            server_id, "delete_all", "delete tags", lambda conn: repo.set_tags(conn, server_id, [])
        )
