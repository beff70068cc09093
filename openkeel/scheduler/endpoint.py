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
from collections.abc import Mapping
from typing import Any, ClassVar

import sqlalchemy as sa
from oslo_config import cfg

from openkeel.clients.placement import PlacementClient
from openkeel.db.repositories.aggregates import AggregateRepository
from openkeel.db.repositories.server_groups import ServerGroupRepository
from openkeel.domain.errors import Invalid
from openkeel.notifications.emitter import Notifier, notifier_from_conf
from openkeel.notifications.instance_payloads import Initiator
from openkeel.rpc.message import CallContext, Target
from openkeel.rpc.messages import RpcMessage
from openkeel.rpc.messages import scheduler as m
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


class SchedulerEndpoint:
    """Nova's SchedulerManager methods over a ``HostSelector`` and its caches."""

    rpc_version: ClassVar[str] = RPC_VERSION
    rpc_namespace: ClassVar[str | None] = None
    rpc_messages: ClassVar[Mapping[str, type[RpcMessage]]] = m.MESSAGES

    def __init__(
        self,
        selector: HostSelector,
        instance_map: InstanceHostMap,
        aggregates: AggregateCache,
        notifier: Notifier | None = None,
    ) -> None:
        self.selector = selector
        self.instance_map = instance_map
        self.aggregates = aggregates
        self.notifier = notifier or Notifier()

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
        notifier = notifier_from_conf(conf).prepare("nova-scheduler", conf.host)
        return cls(selector, instance_map, aggregates, notifier)

    # -- calls ---------------------------------------------------------------------------

    def select_destinations(self, context: CallContext, msg: m.SelectDestinations) -> list[Any]:
        """Per instance [chosen, alternates...] as Selection dicts (``return_objects``), else
        the legacy list of ``{host, nodename, limits}`` of the chosen hosts."""
        if not msg.instance_uuids:
            raise Invalid("select_destinations needs the instance uuids to claim for")
        request = parse_request_spec(msg.spec_obj)
        request = dataclasses.replace(
            request,
            project_id=request.project_id or context.project_id,
            user_id=request.user_id or context.user_id,
        )
        LOG.debug("Starting to schedule for instances: %s", list(msg.instance_uuids))
        who = Initiator(context.request_id, context.user_id, context.project_id)
        self.notifier.select_destinations(msg.spec_obj, "start", who)
        selections = self.selector.select(
            request,
            list(msg.instance_uuids),
            return_alternates=msg.return_alternates and msg.return_objects,
        )
        self.notifier.select_destinations(msg.spec_obj, "end", who)
        if not msg.return_objects:
            return [chosen[0].to_legacy_dict() for chosen in selections]
        return [[s.to_primitive() for s in per_instance] for per_instance in selections]

    # -- fanout casts --------------------------------------------------------------------

    def update_aggregates(self, context: CallContext, msg: m.UpdateAggregates) -> None:
        """Aggregates were created or changed."""
        self.aggregates.update(aggregate_from_primitive(a) for a in msg.aggregates)

    def delete_aggregate(self, context: CallContext, msg: m.DeleteAggregate) -> None:
        """An aggregate was deleted."""
        self.aggregates.delete(aggregate_from_primitive(msg.aggregate))

    def update_instance_info(self, context: CallContext, msg: m.UpdateInstanceInfo) -> None:
        """Instances now on ``host_name``."""
        uuids = [str(info["uuid"]) for info in msg.instance_info if info.get("uuid")]
        self.instance_map.add(msg.host_name, uuids)

    def delete_instance_info(self, context: CallContext, msg: m.DeleteInstanceInfo) -> None:
        """An instance left ``host_name``."""
        self.instance_map.remove(msg.host_name, msg.instance_uuid)

    def sync_instance_info(self, context: CallContext, msg: m.SyncInstanceInfo) -> None:
        """The full list of instances on ``host_name``."""
        self.instance_map.sync(msg.host_name, msg.instance_uuids)


def serve(transport: Transport, endpoint: SchedulerEndpoint, host: str) -> RpcServer:
    """Start an RPC server for ``endpoint`` on topic ``scheduler`` as server ``host``."""
    return RpcServer(transport, Target(TOPIC, server=host), [endpoint]).start()
