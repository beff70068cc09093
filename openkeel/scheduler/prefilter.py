"""Host restrictions applied before the configured filters (Nova's HostManager and its
mandatory request filters): the requested availability zone, ``ignore_hosts``,
``requested_destination`` host/node/cell, and ``force_hosts``/``force_nodes`` (forced hosts
then skip the configured filters, as in Nova: see ``is_forced``). Pure.
"""

from __future__ import annotations

from collections.abc import Sequence

from openkeel.scheduler.host_state import HostState
from openkeel.scheduler.request import SchedulingRequest


def _lower(names: Sequence[str] | frozenset[str]) -> set[str]:
    return {name.lower() for name in names}


def prefilter_hosts(hosts: Sequence[HostState], request: SchedulingRequest) -> list[HostState]:
    """The hosts the request may use at all (the zone is always enforced)."""
    remaining = list(hosts)
    zone = request.availability_zone
    if zone:
        remaining = [h for h in remaining if zone in h.availability_zones]
    dest = request.requested_destination
    if dest is not None:
        remaining = [
            h
            for h in remaining
            if (dest.host is None or h.host == dest.host)
            and (dest.node is None or h.nodename == dest.node)
            and (dest.cell is None or h.cell_uuid == dest.cell)
        ]
    if request.ignore_hosts:
        ignored = _lower(request.ignore_hosts)
        remaining = [h for h in remaining if h.host.lower() not in ignored]
    if request.force_hosts:
        forced = _lower(request.force_hosts)
        remaining = [h for h in remaining if h.host.lower() in forced]
    if request.force_nodes:
        forced = _lower(request.force_nodes)
        remaining = [h for h in remaining if h.nodename.lower() in forced]
    return remaining


def is_forced(request: SchedulingRequest) -> bool:
    """Whether the request forces hosts or nodes (then filters are skipped)."""
    return bool(request.force_hosts or request.force_nodes)
