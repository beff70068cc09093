"""The allocation-candidates query for a request (Nova's ResourceRequest, unnumbered group).

Pure: ``candidate_query(request, ...)`` -> ``CandidateQuery``. Resources from the flavor
(VCPU, MEMORY_MB, DISK_GB = ephemeral + swap MB rounded up to GB + root unless boot from
volume), overridden by ``resources:X=N`` extra specs (0 drops the class); traits from
``trait:X=required|forbidden`` extra specs and image properties (and ``traits_required``);
``member_of`` from the requested destination's aggregates and the zone's aggregates;
``in_tree`` for a single targeted node; compute nodes of disabled services are excluded
through the COMPUTE_STATUS_DISABLED trait. Numbered groups of the flavor (``resources1:``)
are not supported and are ignored; the ports' request groups (decision 0076) are suffixed
groups named by their requester, with ``same_subtree`` and the flavor's ``group_policy``
(``none`` when unset and there are two groups or more, as Nova defaults it).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence

from openkeel.clients.placement_models import CandidateQuery
from openkeel.scheduler.request import SchedulingRequest

COMPUTE_STATUS_DISABLED = "COMPUTE_STATUS_DISABLED"
_RESOURCE_KEY = re.compile(r"^resources:([A-Z0-9_]+)$")
_TRAIT_KEY = re.compile(r"^trait:([A-Za-z0-9_]+)$")
# Hints that make Nova ask Placement for every candidate (no limit).
_UNLIMITED_HINTS = ("group", "same_host", "different_host")


def flavor_resources(request: SchedulingRequest) -> dict[str, int]:
    """Resource class -> amount for one instance, zeros stripped."""
    flavor = request.flavor
    amounts: dict[str, int] = {}
    for key, value in flavor.extra_specs.items():
        match = _RESOURCE_KEY.match(key)
        if match:
            try:
                amounts[match.group(1)] = int(value)
            except ValueError:
                continue
    if "VCPU" not in amounts and "PCPU" not in amounts:
        amounts["VCPU"] = flavor.vcpus
    amounts.setdefault("MEMORY_MB", flavor.memory_mb)
    if "DISK_GB" not in amounts:
        disk = flavor.ephemeral_gb + math.ceil(flavor.swap / 1024)
        if not request.is_bfv:
            disk += flavor.root_gb
        amounts["DISK_GB"] = disk
    return {rc: n for rc, n in amounts.items() if n > 0}


def _traits(items: Mapping[str, object]) -> tuple[set[str], set[str]]:
    required: set[str] = set()
    forbidden: set[str] = set()
    for key, value in items.items():
        match = _TRAIT_KEY.match(key)
        if not match:
            continue
        if value == "required":
            required.add(match.group(1))
        elif value == "forbidden":
            forbidden.add(match.group(1))
    return required, forbidden


def requested_traits(request: SchedulingRequest) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(required, forbidden) traits from the flavor and the image."""
    required, forbidden = _traits(request.flavor.extra_specs)
    image_required, _ = _traits(request.image.properties)
    required |= image_required
    listed = request.image.properties.get("traits_required") or ()
    if isinstance(listed, list | tuple):
        required |= {str(t) for t in listed}
    forbidden.add(COMPUTE_STATUS_DISABLED)
    return tuple(sorted(required)), tuple(sorted(forbidden - required))


def _group_policy(request: SchedulingRequest) -> str | None:
    policy = request.flavor.extra_specs.get("group_policy")
    if policy in ("none", "isolate"):
        return policy
    return "none" if len(request.port_requests.groups) >= 2 else None


def candidate_query(
    request: SchedulingRequest,
    *,
    zone_aggregates: Sequence[str] = (),
    in_tree: str | None = None,
    limit: int | None = None,
) -> CandidateQuery:
    """The query: ``zone_aggregates`` (uuids) restrict to the requested zone's aggregates."""
    required, forbidden = requested_traits(request)
    member_of: list[tuple[str, ...]] = []
    destination = request.requested_destination
    if destination is not None:
        member_of.extend(destination.aggregates)
    if zone_aggregates:
        member_of.append(tuple(sorted(zone_aggregates)))
    if request.instance_group is not None or any(
        name in request.scheduler_hints for name in _UNLIMITED_HINTS
    ):
        limit = None
    return CandidateQuery(
        resources=flavor_resources(request),
        required_traits=required,
        forbidden_traits=forbidden,
        member_of=tuple(member_of),
        forbidden_aggregates=destination.forbidden_aggregates if destination else (),
        in_tree=in_tree,
        limit=limit,
        groups=request.port_requests.query_groups(),
        group_policy=_group_policy(request),
        same_subtree=request.port_requests.same_subtree,
    )
