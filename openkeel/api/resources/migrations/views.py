"""Bodies of GET /os-migrations per microversion (2.23 migration_type, 2.59 uuid, 2.80 user and
project); hosts are blanked without ``os-migrations:index:host``, as Nova."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from openkeel.api.request import ApiRequest
from openkeel.domain.migrations import Migration

_HOSTS = ("dest_compute", "dest_host", "dest_node", "source_compute", "source_node")


def _time(value: datetime | None) -> str | None:
    return None if value is None else value.strftime("%Y-%m-%dT%H:%M:%S.%f")


def migration(req: ApiRequest, item: Migration, show_hosts: bool) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": item.id,
        "instance_uuid": item.instance_uuid,
        "status": item.status,
        "old_instance_type_id": item.old_instance_type_id,
        "new_instance_type_id": item.new_instance_type_id,
        "created_at": _time(item.created_at),
        "updated_at": _time(item.updated_at),
    }
    for key in _HOSTS:
        body[key] = getattr(item, key) if show_hosts else None
    if req.at_least("2.23"):
        body["migration_type"] = item.migration_type
    if req.at_least("2.59"):
        body["uuid"] = item.uuid
    if req.at_least("2.80"):
        body["user_id"] = item.user_id
        body["project_id"] = item.project_id
    return body
