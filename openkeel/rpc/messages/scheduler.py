"""Messages of the scheduler role (topic ``scheduler``), Nova's SchedulerAPI 4.x names.

``SelectDestinations`` is a call from the conductor; the others are fanout casts that keep
every scheduler's caches current (aggregates from the API, instances from the compute hosts).
Served by ``openkeel.scheduler.endpoint``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from openkeel.rpc.messages import Json, RpcMessage, by_method


@dataclass(frozen=True)
class SelectDestinations(RpcMessage):
    """Pick hosts (and alternates) for ``instance_uuids`` per the request spec (call).

    ``spec_obj`` is the request spec document (keys: openkeel.scheduler.request). The answer:
    with ``return_objects``, per instance a list of Selection documents [chosen (its
    allocations claimed in Placement), alternates...]; else one ``{host, nodename, limits}``
    per instance. Raises openkeel.domain.errors.NoValidHost.
    """

    method: ClassVar[str] = "select_destinations"
    versions: ClassVar[tuple[str, ...]] = ("4.5", "4.4")

    spec_obj: Json
    instance_uuids: tuple[str, ...]
    return_objects: bool = False
    return_alternates: bool = False


@dataclass(frozen=True)
class UpdateAggregates(RpcMessage):
    """Aggregates changed: ``{id, uuid, name, hosts, metadata}`` each (fanout)."""

    method: ClassVar[str] = "update_aggregates"
    versions: ClassVar[tuple[str, ...]] = ("4.1",)

    aggregates: tuple[Json, ...]


@dataclass(frozen=True)
class DeleteAggregate(RpcMessage):
    """An aggregate is gone (fanout)."""

    method: ClassVar[str] = "delete_aggregate"
    versions: ClassVar[tuple[str, ...]] = ("4.1",)

    aggregate: Json


@dataclass(frozen=True)
class UpdateInstanceInfo(RpcMessage):
    """Instances now on ``host_name``: ``{uuid, ...}`` each (fanout)."""

    method: ClassVar[str] = "update_instance_info"
    versions: ClassVar[tuple[str, ...]] = ("4.2",)

    host_name: str
    instance_info: tuple[Json, ...]


@dataclass(frozen=True)
class DeleteInstanceInfo(RpcMessage):
    """An instance left ``host_name`` (fanout)."""

    method: ClassVar[str] = "delete_instance_info"
    versions: ClassVar[tuple[str, ...]] = ("4.2",)

    host_name: str
    instance_uuid: str


@dataclass(frozen=True)
class SyncInstanceInfo(RpcMessage):
    """The full list of ``host_name``'s instances (fanout)."""

    method: ClassVar[str] = "sync_instance_info"
    versions: ClassVar[tuple[str, ...]] = ("4.2",)

    host_name: str
    instance_uuids: tuple[str, ...]


MESSAGES = by_method(
    SelectDestinations, UpdateAggregates, DeleteAggregate, UpdateInstanceInfo,
    DeleteInstanceInfo, SyncInstanceInfo,
)  # fmt: skip
