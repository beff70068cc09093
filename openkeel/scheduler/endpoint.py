"""The scheduler role's RPC endpoint: topic ``scheduler``, Nova's SchedulerAPI 4.5.

``select_destinations`` (call) runs ``HostSelector``; the aggregate and instance info methods
(fanout casts from the API and the compute hosts) keep this scheduler's caches current.
``SchedulerEndpoint.from_conf`` wires one from the configuration; ``serve`` puts it on a
transport. Built by the composition roots (``openkeel.cmd``) and tests.
"""

from __future__ import annotations

import dataclasses
import logging
import random
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import sqlalchemy as sa
from oslo_config import cfg

from openkeel.clients.placement import PlacementClient
from openkeel.db.repositories.aggregates import AggregateRepository
from openkeel.db.repositories.server_groups import ServerGroupRepository
from openkeel.domain.errors import Invalid
from openkeel.rpc.message import CallContext, Target
from openkeel.rpc.server import RpcServer
from openkeel.rpc.transport import Transport
from openkeel.scheduler.aggregate_cache import AggregateCache, aggregate_from_primitive
from openkeel.scheduler.filters import FilterSettings, load_filters
from openkeel.scheduler.host_state import Clock, HostStateSource, utcnow
from openkeel.scheduler.instance_map import InstanceHostMap
from openkeel.scheduler.request import parse_request_spec
from openkeel.scheduler.selection import HostSelector, SelectionSettings
from openkeel.scheduler.weighers import WeigherSettings, load_weighers

LOG = logging.getLogger(__name__)

TOPIC = "scheduler"
RPC_VERSION = "4.5"


def _objects(value: Any) -> list[Any]:
    """A list payload, or the ``objects`` of a Nova object list, or one object."""
    if isinstance(value, Mapping):
        data = value.get("nova_object.data", value)
        if isinstance(data, Mapping) and "objects" in data:
            return list(data["objects"])
        return [value]
    return list(value or ())


def _uuid_of(item: Any) -> str | None:
    if isinstance(item, str):
        return item
    if isinstance(item, Mapping):
        data = item.get("nova_object.data", item)
        return str(data["uuid"]) if data.get("uuid") else None
    return None


class SchedulerEndpoint:
    """Nova's SchedulerManager methods over a ``HostSelector`` and its caches."""

    rpc_version: ClassVar[str] = RPC_VERSION
    rpc_namespace: ClassVar[str | None] = None

    def __init__(
        self,
        selector: HostSelector,
        instance_map: InstanceHostMap,
        aggregates: AggregateCache,
    ) -> None:
        self.selector = selector
        self.instance_map = instance_map
        self.aggregates = aggregates

    @classmethod
    def from_conf(
        cls,
        conf: cfg.ConfigOpts,
        placement: PlacementClient,
        cell_dbs: Mapping[str, sa.Engine],
        *,
        api_db: sa.Engine | None = None,
        clock: Clock = utcnow,
        rng: random.Random | None = None,
    ) -> SchedulerEndpoint:
        """An endpoint configured from ``conf`` (``[scheduler]``, ``[filter_scheduler]``)."""
        fs = conf.filter_scheduler
        filters = load_filters(
            fs.enabled_filters,
            FilterSettings(
                service_down_time=conf.service_down_time,
                default_availability_zone=conf.default_availability_zone,
                default_architecture=fs.image_properties_default_architecture,
                clock=clock,
            ),
        )
        multipliers = {
            name: float(getattr(fs, name)) for name in fs if name.endswith("_weight_multiplier")
        }
        weighers = load_weighers(fs.weight_classes, WeigherSettings(multipliers))
        settings = SelectionSettings(
            max_attempts=conf.scheduler.max_attempts,
            max_placement_results=conf.scheduler.max_placement_results,
            query_placement_for_availability_zone=(
                conf.scheduler.query_placement_for_availability_zone
            ),
            host_subset_size=fs.host_subset_size,
            shuffle_best_same_weighed_hosts=fs.shuffle_best_same_weighed_hosts,
        )
        instance_map = InstanceHostMap()
        aggregates = AggregateCache(AggregateRepository(api_db) if api_db is not None else None)
        hosts = HostStateSource(cell_dbs, instance_map, default_az=conf.default_availability_zone)
        selector = HostSelector(
            settings,
            placement,
            hosts,
            instance_map,
            filters,
            weighers,
            aggregates=aggregates,
            groups=ServerGroupRepository(api_db) if api_db is not None else None,
            rng=rng,
        )
        return cls(selector, instance_map, aggregates)

    # -- calls ---------------------------------------------------------------------------

    def select_destinations(
        self,
        context: CallContext,
        spec_obj: Mapping[str, Any] | None = None,
        instance_uuids: Sequence[str] | None = None,
        return_objects: bool = False,
        return_alternates: bool = False,
        request_spec: Mapping[str, Any] | None = None,
        filter_properties: Mapping[str, Any] | None = None,
    ) -> list[Any]:
        """Per instance [chosen, alternates...] as Selection dicts (``return_objects``), else
        the legacy list of ``{host, nodename, limits}`` of the chosen hosts."""
        spec = spec_obj if spec_obj is not None else request_spec
        if spec is None:
            raise Invalid("select_destinations needs a request spec")
        if not instance_uuids:
            raise Invalid("select_destinations needs the instance uuids to claim for")
        request = parse_request_spec(spec)
        request = dataclasses.replace(
            request,
            project_id=request.project_id or context.project_id,
            user_id=request.user_id or context.user_id,
        )
        LOG.debug("Starting to schedule for instances: %s", list(instance_uuids))
        selections = self.selector.select(
            request,
            list(instance_uuids),
            return_alternates=return_alternates and return_objects,
        )
        if not return_objects:
            return [chosen[0].to_legacy_dict() for chosen in selections]
        return [[s.to_primitive() for s in per_instance] for per_instance in selections]

    # -- fanout casts --------------------------------------------------------------------

    def update_aggregates(self, context: CallContext, aggregates: Any) -> None:
        """Aggregates were created or changed."""
        self.aggregates.update(aggregate_from_primitive(a) for a in _objects(aggregates))

    def delete_aggregate(self, context: CallContext, aggregate: Any) -> None:
        """An aggregate was deleted."""
        for agg in _objects(aggregate):
            self.aggregates.delete(aggregate_from_primitive(agg))

    def update_instance_info(
        self, context: CallContext, host_name: str, instance_info: Any
    ) -> None:
        """Instances now on ``host_name`` (one instance or a list)."""
        uuids = [u for u in (_uuid_of(i) for i in _objects(instance_info)) if u]
        self.instance_map.add(host_name, uuids)

    def delete_instance_info(
        self, context: CallContext, host_name: str, instance_uuid: str
    ) -> None:
        """An instance left ``host_name``."""
        self.instance_map.remove(host_name, instance_uuid)

    def sync_instance_info(
        self, context: CallContext, host_name: str, instance_uuids: Sequence[str]
    ) -> None:
        """The full list of instances on ``host_name``."""
        self.instance_map.sync(host_name, instance_uuids)


def serve(transport: Transport, endpoint: SchedulerEndpoint, host: str) -> RpcServer:
    """Start an RPC server for ``endpoint`` on topic ``scheduler`` as server ``host``."""
    return RpcServer(transport, Target(TOPIC, server=host), [endpoint]).start()
