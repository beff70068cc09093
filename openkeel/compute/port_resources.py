"""Where the server's ports' resource requests were allocated (decision 0076): the request
group -> resource provider mapping compute gives the network adapter, which writes it into
the ports' ``binding:profile.allocation`` when it binds them; an interface attach claims its
port's resources on the server's node first, a detach gives them back.

A build has it in its request spec (the conductor filled it from the allocation request it
claimed); a move's destination, a revert or an evacuation reads it from the server's current
allocation in Placement (Nova's ``fill_provider_mapping_based_on_allocation``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from openkeel.clients.placement_errors import PlacementError
from openkeel.clients.placement_models import Allocations, CandidateQuery
from openkeel.compute.host import ComputeHost
from openkeel.domain.errors import Invalid
from openkeel.domain.instances import Instance
from openkeel.domain.resource_requests import (
    PortRequests,
    allocated_resources,
    mapping_from_allocation,
    ports_requests,
    provider_mapping,
)
from openkeel.network.adapter import RequestedNetwork

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


def claim_for_attach(
    host: ComputeHost, instance: Instance, requested: RequestedNetwork
) -> tuple[Mapping_ | None, Allocations]:
    """An attached port's resource request added to the server's allocation on its node
    (Nova's ``_allocate_port_resource_for_instance``): the mapping for its binding profile
    and what was added; (None, {}) when the port requests nothing. Nothing on the node fits:
    Nova's InterfaceAttachResourceAllocationFailed (400)."""
    if not requested.port_id:
        return None, {}
    requests = host.network.port_resource_requests([requested])
    if not requests:
        return None, {}
    node = host.tracker.node_for(instance.node)
    refused = Invalid(
        f"Failed to allocate additional resources to {instance.uuid} during interface attach"
    )
    if node is None:
        raise refused
    query = CandidateQuery(
        resources={},
        groups=requests.query_groups(),
        group_policy="none",
        same_subtree=requests.same_subtree,
        groups_in_tree=node.uuid,
    )
    try:
        answer = host.placement.get_allocation_candidates(query)
        if not answer.allocation_requests:
            raise refused
        chosen = answer.allocation_requests[0]
        host.placement.change_allocations(instance.uuid, chosen.allocations)
    except PlacementError as exc:
        raise refused from exc
    return dict(chosen.mappings), chosen.allocations


def give_back(host: ComputeHost, uuid: str, held: Allocations) -> None:
    """Take a port's resources out of the server's allocation (a detach, a failed attach)."""
    if held:
        host.placement.change_allocations(uuid, held, sign=-1)


def held_by_port(host: ComputeHost, uuid: str, port_id: str) -> Allocations:
    """What a bound port of the server holds, from its binding profile's allocation."""
    for port in host.network.instance_ports(uuid):
        if port["id"] == port_id:
            profile = port.get("binding:profile") or {}
            return allocated_resources(
                port_id, port.get("resource_request"), profile.get("allocation")
            )
    return {}
