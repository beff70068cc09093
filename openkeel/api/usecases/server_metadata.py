"""Server metadata use cases: list, show, merge, replace, set one key and delete one key of
``/servers/{server_id}/metadata``, with Nova's order of checks: visibility (404), policy on the
server's project, lock (409 unless admin), vm_state (409), the ``metadata_items`` quota (403).

Called by the server metadata handlers. Writes re-read the server inside the cell transaction
so the lock and state checks see the row they change.
"""

from __future__ import annotations

from collections.abc import Mapping

import sqlalchemy as sa

from openkeel.api.context import RequestContext
from openkeel.api.services import ApiServices
from openkeel.api.usecases.quotas import effective_limit
from openkeel.api.usecases.servers.lifecycle import InstanceIsLocked
from openkeel.api.usecases.servers.lookup import FoundServer, find_allowed
from openkeel.db.engine import reader
from openkeel.db.repositories import instance_metadata, instances
from openkeel.domain.errors import Invalid, NotFound, OverQuota
from openkeel.domain.instances import Instance
from openkeel.domain.states import ensure_action_allowed

POLICY = "os_compute_api:server-metadata:%s"
ITEM_NOT_FOUND = "Metadata item was not found"


class ServerMetadataService:
    """The metadata of the servers one caller can see."""

    def __init__(self, services: ApiServices, context: RequestContext) -> None:
        self._services = services
        self._context = context

    def _find(self, server_id: str, rule: str) -> FoundServer:
        return find_allowed(self._services, self._context, server_id, POLICY % rule)

    def _current(self, found: FoundServer) -> dict[str, str]:
        if found.cell_uuid is None:
            return dict(found.instance.metadata)  # still a build request
        with reader(self._services.cell_dbs[found.cell_uuid]).connect() as conn:
            return instance_metadata.get_metadata(conn, found.instance.uuid)

    def list(self, server_id: str) -> dict[str, str]:
        """GET .../metadata."""
        return self._current(self._find(server_id, "index"))

    def show(self, server_id: str, key: str) -> dict[str, str]:
        """GET .../metadata/{key}: ``{key: value}``."""
        metadata = self._current(self._find(server_id, "show"))
        if key not in metadata:
            raise NotFound(ITEM_NOT_FOUND)
        return {key: metadata[key]}

    def merge(self, server_id: str, metadata: Mapping[str, str]) -> dict[str, str]:
        """POST .../metadata: add or change the given keys; returns all metadata."""
        return self._write(self._find(server_id, "create"), metadata, replace=False)

    def replace(self, server_id: str, metadata: Mapping[str, str]) -> dict[str, str]:
        """PUT .../metadata: the given keys become all the metadata."""
        return self._write(self._find(server_id, "update_all"), metadata, replace=True)

    def set_item(self, server_id: str, key: str, item: Mapping[str, str]) -> dict[str, str]:
        """PUT .../metadata/{key} with ``{"meta": {key: value}}``; returns the item."""
        found = self._find(server_id, "update")
        if key not in item:
            raise Invalid("Request body and URI mismatch")
        self._write(found, item, replace=False)
        return dict(item)

    def delete_item(self, server_id: str, key: str) -> None:
        """DELETE .../metadata/{key}."""
        found = self._find(server_id, "delete")
        if key not in self._current(found):
            raise NotFound(ITEM_NOT_FOUND)
        with self._cell(found).begin() as conn:
            self._check(conn, found, "delete_instance_metadata")
            instance_metadata.delete_metadata_key(conn, found.instance.uuid, key)

    def _write(
        self, found: FoundServer, metadata: Mapping[str, str], *, replace: bool
    ) -> dict[str, str]:
        if found.cell_uuid is None:
            # Not scheduled yet: Nova refuses it in vm_state building.
            self._gate(found.instance, "update_instance_metadata")
        with self._cell(found).begin() as conn:
            inst = self._check(conn, found, "update_instance_metadata")
            wanted = dict(metadata) if replace else {**inst.metadata, **metadata}
            self._check_quota(wanted)
            return instance_metadata.update_metadata(conn, inst.uuid, wanted, replace=True)

    def _cell(self, found: FoundServer) -> sa.Engine:
        engine: sa.Engine = self._services.cell_dbs[found.cell_uuid or ""]
        return engine

    def _check(self, conn: sa.Connection, found: FoundServer, operation: str) -> Instance:
        inst = instances.get(conn, found.instance.uuid)
        self._gate(inst, operation)
        return inst

    def _gate(self, inst: Instance, operation: str) -> None:
        if inst.locked and not self._context.is_admin:
            raise InstanceIsLocked(inst.uuid)
        ensure_action_allowed(
            operation,
            server_id=inst.uuid,
            vm_state=inst.vm_state,
            task_state=inst.task_state,
            launched=inst.launched_at is not None,
        )

    def _check_quota(self, metadata: Mapping[str, str]) -> None:
        if not metadata:
            return
        project = self._context.project_id or ""
        allowed = effective_limit(self._services, project, self._context.user_id, "metadata_items")
        if 0 <= allowed < len(metadata):
            raise OverQuota(f"Maximum number of metadata items exceeds {allowed}")
