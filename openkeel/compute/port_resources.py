"""Where the server's ports' resource requests were allocated (decision 0076): the request
group -> resource provider mapping compute gives the network adapter, which writes it into
the ports' ``binding:profile.allocation`` when it binds them.

A build has it in its request spec (the conductor filled it from the allocation request it
claimed); a move's destination, a revert or an evacuation reads it from the server's current
allocation in Placement (Nova's ``fill_provider_mapping_based_on_allocation``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from openkeel.compute.host import ComputeHost
from openkeel.domain.resource_requests import (
    PortRequests,
    mapping_from_allocation,
    ports_requests,
    provider_mapping,
)

Mapping_ = Mapping[str, tuple[str, ...]]


def from_spec(spec: Mapping[str, Any] | None) -> Mapping_ | None:
    """The mapping of a request spec's port groups (None: the spec has none)."""
    if not spec or not PortRequests.from_spec(spec):
        return None
    return provider_mapping(spec)


def from_allocation(host: ComputeHost, uuid: str, consumer: str) -> Mapping_ | None:
    """The mapping of the server's ports' groups to the providers of ``consumer``'s
    allocation (the server's, or a migration's; None: its ports request nothing)."""
    requests = ports_requests(host.network.instance_ports(uuid))
    if not requests:
        return None
    # Only this host's providers: an evacuated server's consumer still holds the dead
    # source's allocation beside this host's.
    tree = {
        provider.uuid
        for node in host.tracker.provider_uuids()
        for provider in host.placement.list_providers(in_tree=node)
    }
    held = host.placement.get_allocations(consumer).allocations
    allocations = {rp: amounts for rp, amounts in held.items() if rp in tree}
    traits = {rp: host.placement.get_traits(rp) for rp in allocations}
    return mapping_from_allocation(requests, allocations, traits)
