"""Typed values exchanged with Placement: providers, inventories, candidates, allocations.

Built by openkeel.clients.placement from Placement's JSON; used by the scheduler and compute.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# resource provider uuid -> resource class -> amount
Allocations = Mapping[str, Mapping[str, int]]


@dataclass(frozen=True)
class ResourceProvider:
    """A resource provider as Placement shows it."""

    uuid: str
    name: str
    generation: int
    parent_provider_uuid: str | None = None
    root_provider_uuid: str | None = None

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> ResourceProvider:
        return cls(
            uuid=body["uuid"],
            name=body["name"],
            generation=body["generation"],
            parent_provider_uuid=body.get("parent_provider_uuid"),
            root_provider_uuid=body.get("root_provider_uuid"),
        )


@dataclass(frozen=True)
class Inventory:
    """One resource class's inventory on a provider; ``max_unit`` None means ``total``."""

    total: int
    reserved: int = 0
    min_unit: int = 1
    max_unit: int | None = None
    step_size: int = 1
    allocation_ratio: float = 1.0

    def to_json(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "reserved": self.reserved,
            "min_unit": self.min_unit,
            "max_unit": self.total if self.max_unit is None else self.max_unit,
            "step_size": self.step_size,
            "allocation_ratio": self.allocation_ratio,
        }

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> Inventory:
        return cls(
            total=body["total"],
            reserved=body["reserved"],
            min_unit=body["min_unit"],
            max_unit=body["max_unit"],
            step_size=body["step_size"],
            allocation_ratio=body["allocation_ratio"],
        )


@dataclass(frozen=True)
class CandidateQuery:
    """What GET /allocation_candidates is asked for (the unnumbered request group).

    ``member_of``: each entry is a set of aggregates of which the provider must be in
    at least one; entries are ANDed. ``forbidden_aggregates`` excludes providers.
    """

    resources: Mapping[str, int]
    required_traits: tuple[str, ...] = ()
    forbidden_traits: tuple[str, ...] = ()
    member_of: tuple[tuple[str, ...], ...] = ()
    forbidden_aggregates: tuple[str, ...] = ()
    in_tree: str | None = None
    limit: int | None = None
    # Suffixed (granular) groups: (suffix, resources, required traits), e.g. a port's.
    groups: tuple[tuple[str, Mapping[str, int], tuple[str, ...]], ...] = ()
    group_policy: str | None = None
    same_subtree: tuple[tuple[str, ...], ...] = ()
    # ``in_tree<suffix>`` of every suffixed group (an interface attach: the server's node).
    groups_in_tree: str | None = None

    def to_params(self) -> list[tuple[str, str]]:
        params = []
        if self.resources:  # a query of suffixed groups only has no unsuffixed resources
            amounts = ",".join(f"{rc}:{n}" for rc, n in sorted(self.resources.items()))
            params.append(("resources", amounts))
        traits = [*self.required_traits, *(f"!{t}" for t in self.forbidden_traits)]
        if traits:
            params.append(("required", ",".join(traits)))
        params.extend(("member_of", "in:" + ",".join(aggs)) for aggs in self.member_of)
        if self.forbidden_aggregates:
            params.append(("member_of", "!in:" + ",".join(self.forbidden_aggregates)))
        if self.in_tree is not None:
            params.append(("in_tree", self.in_tree))
        if self.limit is not None:
            params.append(("limit", str(self.limit)))
        for suffix, resources, required in self.groups:
            amounts = ",".join(f"{rc}:{n}" for rc, n in sorted(resources.items()))
            params.append((f"resources{suffix}", amounts))
            if required:
                params.append((f"required{suffix}", ",".join(sorted(required))))
            if self.groups_in_tree is not None:
                params.append((f"in_tree{suffix}", self.groups_in_tree))
        if self.group_policy is not None:
            params.append(("group_policy", self.group_policy))
        params.extend(("same_subtree", ",".join(sorted(s))) for s in self.same_subtree)
        return params


@dataclass(frozen=True)
class AllocationRequest:
    """One way to satisfy a query; ``allocations`` is ready for :meth:`PlacementClient.claim`."""

    allocations: Allocations
    mappings: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class ProviderResource:
    """Capacity (``(total - reserved) * allocation_ratio``) and current usage of one class."""

    capacity: int
    used: int


@dataclass(frozen=True)
class ProviderSummary:
    """What a candidate's provider has, as allocation candidates summarize it."""

    resources: Mapping[str, ProviderResource]
    traits: frozenset[str]
    parent_provider_uuid: str | None
    root_provider_uuid: str


@dataclass(frozen=True)
class AllocationCandidates:
    """The answer of GET /allocation_candidates."""

    allocation_requests: tuple[AllocationRequest, ...]
    provider_summaries: Mapping[str, ProviderSummary]

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> AllocationCandidates:
        requests = tuple(
            AllocationRequest(
                allocations={
                    rp: dict(alloc["resources"]) for rp, alloc in req["allocations"].items()
                },
                mappings={k: tuple(v) for k, v in req.get("mappings", {}).items()},
            )
            for req in body["allocation_requests"]
        )
        summaries = {
            rp: ProviderSummary(
                resources={
                    rc: ProviderResource(capacity=r["capacity"], used=r["used"])
                    for rc, r in s["resources"].items()
                },
                traits=frozenset(s.get("traits", ())),
                parent_provider_uuid=s.get("parent_provider_uuid"),
                root_provider_uuid=s.get("root_provider_uuid", rp),
            )
            for rp, s in body["provider_summaries"].items()
        }
        return cls(allocation_requests=requests, provider_summaries=summaries)


@dataclass(frozen=True)
class ConsumerAllocations:
    """A consumer's allocations; ``generation`` None when the consumer does not exist."""

    allocations: Allocations
    generation: int | None
    project_id: str | None = None
    user_id: str | None = None
    consumer_type: str | None = None

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> ConsumerAllocations:
        return cls(
            allocations={rp: dict(alloc["resources"]) for rp, alloc in body["allocations"].items()},
            generation=body.get("consumer_generation"),
            project_id=body.get("project_id"),
            user_id=body.get("user_id"),
            consumer_type=body.get("consumer_type"),
        )
