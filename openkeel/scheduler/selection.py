"""One select_destinations request: Placement allocation candidates -> host states ->
filters -> weighers -> claim in Placement, per instance, with alternates.

``HostSelector.select`` is Nova's SchedulerManager._schedule: each instance of a
multi-create request is claimed (PUT /allocations/{instance uuid}) on the best host whose
claim succeeds (a conflict moves on to the next host); the chosen host's state consumes the
instance so later instances see it; when an instance cannot be placed, the allocations
already claimed for the request are removed and NoValidHost is raised. Alternates are
unclaimed candidates from the chosen host's cell. Called by ``openkeel.scheduler.endpoint``.
"""

from __future__ import annotations

import json
import logging
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from openkeel.clients import placement_errors
from openkeel.clients.placement import DEFAULT_MICROVERSION, PlacementClient
from openkeel.clients.placement_models import AllocationRequest
from openkeel.domain.aggregates import AZ_KEY, Aggregate
from openkeel.domain.errors import NoValidHost
from openkeel.domain.server_groups import ServerGroup
from openkeel.scheduler import placement_query
from openkeel.scheduler.aggregate_cache import AggregateCache
from openkeel.scheduler.filters import BaseHostFilter, filter_hosts
from openkeel.scheduler.host_state import HostState, HostStateSource
from openkeel.scheduler.instance_map import InstanceHostMap
from openkeel.scheduler.prefilter import is_forced, prefilter_hosts
from openkeel.scheduler.request import SchedulingRequest
from openkeel.scheduler.weighers import BaseHostWeigher, weigh_hosts

LOG = logging.getLogger(__name__)

NOT_ENOUGH_HOSTS = "There are not enough hosts available."


@dataclass(frozen=True)
class SelectionSettings:
    """The ``[scheduler]`` / ``[filter_scheduler]`` values selection uses."""

    max_attempts: int = 3
    max_placement_results: int = 1000
    query_placement_for_availability_zone: bool = False
    host_subset_size: int = 1
    shuffle_best_same_weighed_hosts: bool = False
    allocation_request_version: str = DEFAULT_MICROVERSION


@dataclass(frozen=True)
class Selection:
    """Nova's Selection object: a chosen (claimed) or alternate (unclaimed) destination."""

    service_host: str
    nodename: str
    compute_node_uuid: str
    cell_uuid: str
    allocation_request: str | None
    allocation_request_version: str | None
    limits: dict[str, Any] = field(
        default_factory=lambda: {
            "numa_topology": None,
            "vcpu": None,
            "disk_gb": None,
            "memory_mb": None,
        }
    )

    @classmethod
    def from_host(
        cls, host: HostState, request: AllocationRequest | None, version: str
    ) -> Selection:
        body = None
        if request is not None:
            body = json.dumps(
                {
                    "allocations": {
                        rp: {"resources": dict(res)} for rp, res in request.allocations.items()
                    },
                    "mappings": {k: list(v) for k, v in request.mappings.items()},
                }
            )
        return cls(
            service_host=host.host,
            nodename=host.nodename,
            compute_node_uuid=host.uuid,
            cell_uuid=host.cell_uuid,
            allocation_request=body,
            allocation_request_version=version if request is not None else None,
        )

    def to_primitive(self) -> dict[str, Any]:
        return {
            "service_host": self.service_host,
            "nodename": self.nodename,
            "compute_node_uuid": self.compute_node_uuid,
            "cell_uuid": self.cell_uuid,
            "limits": dict(self.limits),
            "allocation_request": self.allocation_request,
            "allocation_request_version": self.allocation_request_version,
        }

    def to_legacy_dict(self) -> dict[str, Any]:
        """The pre-Queens host dict (``return_objects=False``)."""
        limits = {k: v for k, v in self.limits.items() if v is not None}
        return {"host": self.service_host, "nodename": self.nodename, "limits": limits}


class GroupSource(Protocol):
    """Where server groups are read from (``ServerGroupRepository`` fits)."""

    def get(self, uuid: str) -> ServerGroup | None: ...


@dataclass
class _Claimed:
    instance_uuid: str
    host: HostState
    allocation: AllocationRequest


class HostSelector:
    """Runs requests against Placement and the host states of the cell DBs."""

    def __init__(
        self,
        settings: SelectionSettings,
        placement: PlacementClient,
        hosts: HostStateSource,
        instance_map: InstanceHostMap,
        filters: Sequence[BaseHostFilter],
        weighers: Sequence[BaseHostWeigher],
        *,
        aggregates: AggregateCache | None = None,
        groups: GroupSource | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.settings = settings
        self._placement = placement
        self._hosts = hosts
        self._instances = instance_map
        self._filters = list(filters)
        self._weighers = list(weighers)
        self._aggregates = aggregates or AggregateCache()
        self._groups = groups
        self._rng = rng or random.Random()

    # -- the request ---------------------------------------------------------------------

    def select(
        self,
        request: SchedulingRequest,
        instance_uuids: Sequence[str],
        *,
        return_alternates: bool = False,
    ) -> list[list[Selection]]:
        """Per instance: [chosen (claimed), alternates...]; NoValidHost when one can't fit."""
        aggregates = self._aggregates.current()
        if request.is_rebuild:
            return [[self._check_rebuild(request, aggregates)]]
        request = self._with_group_state(request, instance_uuids)
        hosts = self._candidate_hosts(request, aggregates)
        claimed: list[_Claimed] = []
        try:
            hosts = self._claim_all(request, instance_uuids, hosts, claimed)
        except BaseException:
            self._release(claimed)
            raise
        if len(claimed) < len(instance_uuids):
            self._release(claimed)
            raise NoValidHost(NOT_ENOUGH_HOSTS)
        for item in claimed:
            self._instances.add(item.host.host, [item.instance_uuid])
        num_alts = self.settings.max_attempts - 1 if return_alternates else 0
        return self._with_alternates(request, claimed, hosts, num_alts)

    def _with_group_state(
        self, request: SchedulingRequest, instance_uuids: Sequence[str]
    ) -> SchedulingRequest:
        """Complete the group's members (API DB + this request) and hosts (where members
        run); refresh the instance map for every uuid the request names."""
        group = request.instance_group
        named = set(request.hint("same_host")) | set(request.hint("different_host"))
        if group is not None:
            stored = self._groups.get(group.uuid) if self._groups and group.uuid else None
            members = set(stored.members) if stored else set()
            request = request.with_group_members(frozenset(members | set(instance_uuids)))
            assert request.instance_group is not None
            named |= request.instance_group.members
        self._hosts.refresh_instances(named)
        if request.instance_group is not None:
            located = {self._instances.host_of(uuid) for uuid in request.instance_group.members}
            request = request.with_group_hosts(frozenset(h for h in located if h))
        return request

    def _candidate_hosts(
        self, request: SchedulingRequest, aggregates: Sequence[Aggregate]
    ) -> list[HostState]:
        in_tree, limited = self._target(request)
        zone_aggs: list[str] = []
        if self.settings.query_placement_for_availability_zone and request.availability_zone:
            zone_aggs = [
                a.uuid for a in aggregates if a.metadata.get(AZ_KEY) == request.availability_zone
            ]
        query = placement_query.candidate_query(
            request,
            zone_aggregates=zone_aggs,
            in_tree=in_tree,
            limit=self.settings.max_placement_results if limited else None,
        )
        try:
            answer = self._placement.get_allocation_candidates(query)
        except placement_errors.PlacementBadRequest as exc:
            # e.g. a required trait Placement has never heard of: nothing can match (Nova
            # treats the 400 as "no candidates").
            LOG.info("Placement refused the candidates query: %s", exc)
            raise NoValidHost("") from exc
        if not answer.allocation_requests:
            LOG.info("Got no allocation candidates from the Placement API.")
            raise NoValidHost("")
        by_provider: dict[str, list[AllocationRequest]] = {}
        for alloc in answer.allocation_requests:
            for rp_uuid in alloc.allocations:
                by_provider.setdefault(rp_uuid, []).append(alloc)
        hosts = self._hosts.load(answer.provider_summaries.keys(), aggregates)
        for host in hosts:
            host.allocation_candidates = list(by_provider.get(host.uuid, ()))
            host.use_current_usage(answer.provider_summaries[host.uuid])
        return prefilter_hosts(hosts, request)

    def _check_rebuild(self, request: SchedulingRequest, aggregates: Sequence[Aggregate]) -> Selection:  # fmt: skip
        """A rebuild with a new image (Nova's is_rebuild path): the instance's own node, no
        Placement query and no claim (its allocation does not change), the filters that
        judge images only."""
        host = next(iter(request.force_hosts), None)
        node = next(iter(request.force_nodes), None)
        found = self._hosts.find_nodes(host, node)
        states = self._hosts.load([row.uuid for _cell, row in found], aggregates)
        passing = filter_hosts(self._filters, states, request)
        if not passing:
            raise NoValidHost("")
        return Selection.from_host(passing[0], None, self.settings.allocation_request_version)

    def _target(self, request: SchedulingRequest) -> tuple[str | None, bool]:
        """(in_tree node uuid, whether to limit candidates) for a targeted request."""
        dest = request.requested_destination
        host = (dest.host if dest else None) or next(iter(request.force_hosts), None)
        node = (dest.node if dest else None) or next(iter(request.force_nodes), None)
        if not (host or node):
            return None, True
        nodes = self._hosts.find_nodes(host, node, dest.cell if dest else None)
        if not nodes:
            raise NoValidHost(f"No such host - host: {host} node: {node} ")
        if len(nodes) == 1:
            return nodes[0][1].uuid, True
        return None, False

    # -- claiming ------------------------------------------------------------------------

    def _claim_all(
        self,
        request: SchedulingRequest,
        instance_uuids: Sequence[str],
        hosts: list[HostState],
        claimed: list[_Claimed],
    ) -> list[HostState]:
        """Claim each instance in turn (stop at the first that fits nowhere)."""
        for index, instance_uuid in enumerate(instance_uuids):
            current = request.for_instance(instance_uuid)
            if request.instance_group is not None:
                current = current.with_group_hosts(frozenset(c.host.host for c in claimed))
            hosts = self.sorted_hosts(current, hosts, index)
            chosen = self._claim_first(current, instance_uuid, hosts)
            if chosen is None:
                break
            claimed.append(chosen)
            chosen.host.consume(current)
        return hosts

    def _claim_first(
        self, request: SchedulingRequest, instance_uuid: str, hosts: Sequence[HostState]
    ) -> _Claimed | None:
        for host in hosts:
            if not host.allocation_candidates:
                continue
            alloc = host.allocation_candidates[0]
            try:
                self._placement.claim(
                    instance_uuid,
                    alloc.allocations,
                    project_id=request.project_id or "",
                    user_id=request.user_id or "",
                )
            except placement_errors.AllocationConflict:
                LOG.debug("Claim of %s on %s conflicted; trying the next host", instance_uuid, host)
                continue
            return _Claimed(instance_uuid, host, alloc)
        return None

    def _release(self, claimed: Sequence[_Claimed]) -> None:
        for item in claimed:
            try:
                self._placement.delete_allocations(item.instance_uuid, force=True)
            except placement_errors.PlacementError:
                LOG.exception("Could not remove the allocations of %s", item.instance_uuid)

    # -- ranking -------------------------------------------------------------------------

    def sorted_hosts(
        self, request: SchedulingRequest, hosts: Sequence[HostState], index: int
    ) -> list[HostState]:
        """Filtered hosts, best first; the first picked at random among the best
        ``host_subset_size`` (Nova's _get_sorted_hosts)."""
        if is_forced(request):  # Nova skips the filters for forced hosts/nodes
            passed = list(hosts)
        else:
            passed = filter_hosts(self._filters, hosts, request, index)
        if not passed:
            return []
        weighed = weigh_hosts(self._weighers, passed, request)
        if self.settings.shuffle_best_same_weighed_hosts:
            best = [pair for pair in weighed if pair[0] == weighed[0][0]]
            self._rng.shuffle(best)
            weighed = best + weighed[len(best) :]
        ordered = [host for _, host in weighed]
        subset = ordered[: max(1, self.settings.host_subset_size)]
        chosen = self._rng.choice(subset)
        ordered.remove(chosen)
        return [chosen, *ordered]

    def _with_alternates(
        self,
        request: SchedulingRequest,
        claimed: Sequence[_Claimed],
        hosts: list[HostState],
        num_alts: int,
    ) -> list[list[Selection]]:
        version = self.settings.allocation_request_version
        if len(claimed) > 1 and num_alts > 0:
            hosts = self.sorted_hosts(request, hosts, len(claimed) - 1)
        chosen_hosts = [item.host for item in claimed]
        result: list[list[Selection]] = []
        for item in claimed:
            selections = [Selection.from_host(item.host, item.allocation, version)]
            for host in hosts:
                if len(selections) > num_alts:
                    break
                if host.cell_uuid != item.host.cell_uuid or any(host is c for c in chosen_hosts):
                    continue
                if not host.allocation_candidates:
                    continue
                selections.append(Selection.from_host(host, host.allocation_candidates[0], version))
            result.append(selections)
        return result
