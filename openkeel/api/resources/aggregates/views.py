"""Response bodies of os-aggregates: Nova's object fields (``uuid`` from 2.41), the soft-delete
fields Nova exposes but never fills, and no hosts/metadata in the create body."""

from __future__ import annotations

import datetime
from typing import Any

from openkeel.domain.aggregates import Aggregate

# oslo.serialization's format for datetimes in Nova's JSON bodies (no zone, microseconds).
TIME_FORMAT = "%Y-%m-%dT%H:%M:%S.%f"


def _time(value: datetime.datetime | None) -> str | None:
    return value.strftime(TIME_FORMAT) if value is not None else None


def _fields(aggregate: Aggregate, with_uuid: bool, full: bool = True) -> dict[str, Any]:
    body: dict[str, Any] = {"id": aggregate.id}
    if with_uuid:
        body["uuid"] = aggregate.uuid
    body["name"] = aggregate.name
    if full:
        body["hosts"] = list(aggregate.hosts)
        body["metadata"] = dict(aggregate.metadata)
    body.update(
        {
            "created_at": _time(aggregate.created_at),
            "updated_at": _time(aggregate.updated_at),
            "deleted_at": None,
            "deleted": False,
            "availability_zone": aggregate.availability_zone,
        }
    )
    return body


def aggregate_list(aggregates: list[Aggregate], with_uuid: bool) -> dict[str, Any]:
    """``{"aggregates": [...]}``."""
    return {"aggregates": [_fields(a, with_uuid) for a in aggregates]}


def aggregate_detail(aggregate: Aggregate, with_uuid: bool) -> dict[str, Any]:
    """``{"aggregate": {...}}`` with hosts and metadata (show, update and the actions)."""
    return {"aggregate": _fields(aggregate, with_uuid)}


def aggregate_created(aggregate: Aggregate, with_uuid: bool) -> dict[str, Any]:
    """The create body: no hosts nor metadata."""
    return {"aggregate": _fields(aggregate, with_uuid, full=False)}
