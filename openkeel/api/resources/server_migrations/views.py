"""Bodies of the server migrations API per microversion (2.59 uuid, 2.80 user and project);
hosts are null without ``servers:migrations:index:host`` in the list, as Nova."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from openkeel.api.request import ApiRequest
from openkeel.domain.migrations import Migration

_HOSTS = ("dest_compute", "dest_host", "dest_node", "source_compute", "source_node")


def _time(value: datetime | None) -> str | None:
    return None if value is None else value.strftime("%Y-%m-%dT%H:%M:%S.%f")


def migration(req: ApiRequest, item: Migration, include_host: bool = True) -> dict[str, Any]:
    body: dict[str, Any] = {
        "created_at": _time(item.created_at),
        "disk_processed_bytes": item.disk_processed,
        "disk_remaining_bytes": item.disk_remaining,
        "disk_total_bytes": item.disk_total,
        "id": item.id,
        "memory_processed_bytes": item.memory_processed,
        "memory_remaining_bytes": item.memory_remaining,
        "memory_total_bytes": item.memory_total,
        "server_uuid": item.instance_uuid,
        "status": item.status,
        "updated_at": _time(item.updated_at),
    }
    for key in _HOSTS:
        body[key] = getattr(item, key) if include_host else None
    if req.at_least("2.59"):
        body["uuid"] = item.uuid
    if req.at_least("2.80"):
        body["user_id"] = item.user_id
        body["project_id"] = item.project_id
    return body
