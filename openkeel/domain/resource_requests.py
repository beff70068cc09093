"""Neutron ports' resource requests as Placement request groups (decision 0076).

A port with a QoS minimum bandwidth / packet rate policy carries ``resource_request``:

- the old form (extension ``port-resource-request``): ``{resources, required}``, one group
  whose requester is the port (Nova's ``RequestGroup.from_port_request``);
- the extended form (``port-resource-request-groups``): ``{request_groups: [{id, resources,
  required}], same_subtree: [ids]}``, one group per entry whose requester is the group id
  (``from_extended_port_request``), plus a ``same_subtree`` request-level parameter.

Each group is a suffixed (granular) group of the allocation-candidates query, its suffix the
requester id (Nova's ``ResourceRequest._add_request_group``). The request spec keeps them as
``requested_resources`` (group primitives) and ``request_level_params.same_subtree``; once a
host is chosen each group's ``provider_uuids`` come from the allocation request's
``mappings`` (Nova's ``fill_provider_mapping``) and the port's ``binding:profile.allocation``
is the provider (old form) or ``{group id: provider}`` (extended form).

Pure: used by the network adapters, the API, the scheduler, the conductor and compute.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from openkeel.domain.errors import Invalid

# What Neutron's agents report and a port's QoS rules ask for.
NET_BW_EGR = "NET_BW_EGR_KILOBIT_PER_SEC"
NET_BW_IGR = "NET_BW_IGR_KILOBIT_PER_SEC"
NET_PACKET_RATE = "NET_PACKET_RATE_KILOPACKET_PER_SEC"
NET_PACKET_RATE_EGR = "NET_PACKET_RATE_EGR_KILOPACKET_PER_SEC"
NET_PACKET_RATE_IGR = "NET_PACKET_RATE_IGR_KILOPACKET_PER_SEC"


def trait_name(prefix: str, value: str) -> str:
    """Neutron's custom trait for a physnet or vnic type (``CUSTOM_PHYSNET_PUBLIC``): upper
    case, anything but letters, digits and ``_`` turned into ``_``."""
    clean = "".join(c if c.isalnum() or c == "_" else "_" for c in value.upper())
    return f"CUSTOM_{prefix}_{clean}"


@dataclass(frozen=True)
class RequestGroup:
    """One suffixed request group (Nova's ``RequestGroup`` with ``use_same_provider``)."""

    requester_id: str
    resources: Mapping[str, int]
    required_traits: tuple[str, ...] = ()
    provider_uuids: tuple[str, ...] = ()

    def to_primitive(self) -> dict[str, Any]:
        return {
            "requester_id": self.requester_id,
            "use_same_provider": True,
            "resources": dict(self.resources),
            "required_traits": list(self.required_traits),
            "forbidden_traits": [],
            "provider_uuids": list(self.provider_uuids),
        }

    @classmethod
    def from_primitive(cls, data: Mapping[str, Any]) -> RequestGroup:
        return cls(
            requester_id=str(data["requester_id"]),
            resources={str(k): int(v) for k, v in (data.get("resources") or {}).items()},
            required_traits=tuple(str(t) for t in data.get("required_traits") or ()),
            provider_uuids=tuple(str(p) for p in data.get("provider_uuids") or ()),
        )


@dataclass(frozen=True)
class PortRequests:
    """The request groups of a server's ports and their ``same_subtree`` lists."""

    groups: tuple[RequestGroup, ...] = ()
    same_subtree: tuple[tuple[str, ...], ...] = ()

    def __bool__(self) -> bool:
        return bool(self.groups)

    def __add__(self, other: PortRequests) -> PortRequests:
        return PortRequests(self.groups + other.groups, self.same_subtree + other.same_subtree)

    def query_groups(self) -> tuple[tuple[str, Mapping[str, int], tuple[str, ...]], ...]:
        """(suffix, resources, required traits) of each group, for the candidates query."""
        return tuple((g.requester_id, g.resources, g.required_traits) for g in self.groups)

    def spec_fields(self) -> dict[str, Any]:
        """The request spec's ``requested_resources`` and ``request_level_params``."""
        return {
            "requested_resources": [g.to_primitive() for g in self.groups],
            "request_level_params": {
                "root_required": [],
                "root_forbidden": [],
                "same_subtree": [list(s) for s in self.same_subtree],
            },
        }

    @classmethod
    def from_spec(cls, spec: Mapping[str, Any]) -> PortRequests:
        groups = tuple(
            RequestGroup.from_primitive(g) for g in spec.get("requested_resources") or ()
        )
        params = spec.get("request_level_params") or {}
        subtree = tuple(tuple(str(i) for i in s) for s in params.get("same_subtree") or ())
        return cls(groups, subtree)


def _amounts(value: Any, port_id: str) -> dict[str, int]:
    if not isinstance(value, Mapping) or not value:
        # Placement refuses a group with traits and no resources (Nova's note): a request
        # without resources is not one Nova can schedule.
        raise Invalid(f"Port {port_id} has a resource request without resources")
    try:
        return {str(k): int(v) for k, v in value.items()}
    except (TypeError, ValueError) as exc:
        raise Invalid(f"Port {port_id} has an invalid resource request: {value!r}") from exc


def is_extended(resource_request: Mapping[str, Any]) -> bool:
    """The ``port-resource-request-groups`` form."""
    return "request_groups" in resource_request


def port_requests(port_id: str, resource_request: Mapping[str, Any] | None) -> PortRequests:
    """The groups of one port's ``resource_request`` (either form; None/empty: none)."""
    if not resource_request:
        return PortRequests()
    if is_extended(resource_request):
        groups = tuple(
            RequestGroup(
                requester_id=str(item["id"]),
                resources=_amounts(item.get("resources"), port_id),
                required_traits=tuple(item.get("required") or ()),
            )
            for item in resource_request.get("request_groups") or ()
        )
        subtree = tuple(str(i) for i in resource_request.get("same_subtree") or ())
        return PortRequests(groups, (subtree,) if subtree else ())
    group = RequestGroup(
        requester_id=port_id,
        resources=_amounts(resource_request.get("resources"), port_id),
        required_traits=tuple(resource_request.get("required") or ()),
    )
    return PortRequests((group,))


def ports_requests(ports: Iterable[Mapping[str, Any]]) -> PortRequests:
    """The groups of several ports (Neutron's port documents)."""
    total = PortRequests()
    for port in ports:
        total = total + port_requests(str(port["id"]), port.get("resource_request"))
    return total


def with_mappings(
    groups: Sequence[Mapping[str, Any]], mappings: Mapping[str, Sequence[str]]
) -> list[dict[str, Any]]:
    """The spec's group primitives with ``provider_uuids`` from an allocation request's
    ``mappings`` (suffix -> providers; Nova's ``fill_provider_mapping``)."""
    filled = []
    for group in groups:
        providers = mappings.get(str(group["requester_id"]))
        if providers is None:
            raise Invalid(f"No resource provider fulfils request group {group['requester_id']}")
        filled.append({**group, "provider_uuids": list(providers)})
    return filled


def provider_mapping(spec: Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
    """Requester id -> providers of a spec whose groups have been mapped."""
    return {g.requester_id: g.provider_uuids for g in PortRequests.from_spec(spec).groups}


def binding_allocation(
    port_id: str, resource_request: Mapping[str, Any] | None, mapping: Mapping[str, Sequence[str]]
) -> str | dict[str, str] | None:
    """The port's ``binding:profile.allocation`` (None: the port requests nothing)."""
    if not resource_request:
        return None
    if is_extended(resource_request):
        return {
            str(g["id"]): _provider(mapping, str(g["id"]))
            for g in resource_request.get("request_groups") or ()
        }
    return _provider(mapping, port_id)


def allocated_resources(
    port_id: str, resource_request: Mapping[str, Any] | None, allocation: Any
) -> dict[str, dict[str, int]]:
    """Provider -> resources a bound port holds, from its ``binding:profile.allocation``
    (what an interface detach gives back; nothing when it requests or holds nothing)."""
    if not resource_request or not allocation:
        return {}
    held: dict[str, dict[str, int]] = {}
    for group in port_requests(port_id, resource_request).groups:
        rp = allocation if isinstance(allocation, str) else allocation.get(group.requester_id)
        if rp is None:
            continue
        amounts = held.setdefault(str(rp), {})
        for rc, n in group.resources.items():
            amounts[rc] = amounts.get(rc, 0) + n
    return held


def _provider(mapping: Mapping[str, Sequence[str]], requester_id: str) -> str:
    providers = mapping.get(requester_id)
    if not providers:
        raise Invalid(f"No resource provider is mapped to request group {requester_id}")
    return str(providers[0])


@dataclass(frozen=True)
class BandwidthInventory:
    """A bandwidth provider a host reports (what Neutron's agents would): a physnet's device
    with the vnic types it serves and its egress/ingress kbps."""

    physnet: str
    egress_kbps: int
    ingress_kbps: int
    vnic_types: tuple[str, ...] = ("normal",)
    hosts: frozenset[str] = field(default_factory=frozenset)

    def traits(self) -> tuple[str, ...]:
        return (
            trait_name("PHYSNET", self.physnet),
            *(trait_name("VNIC_TYPE", v) for v in self.vnic_types),
        )

    def serves(self, host: str) -> bool:
        return not self.hosts or host in self.hosts


def parse_bandwidth_inventory(text: str) -> BandwidthInventory:
    """``physnet:egress_kbps:ingress_kbps[:vnic_type+vnic_type][@host+host]`` (the option
    ``[openkeel_network] bandwidth_inventories``)."""
    body, _, hosts = text.partition("@")
    parts = body.split(":")
    if len(parts) not in (3, 4) or not parts[0]:
        raise Invalid(
            f"Invalid bandwidth inventory {text!r}: physnet:egress:ingress[:vnics][@hosts]"
        )
    try:
        egress, ingress = int(parts[1]), int(parts[2])
    except ValueError as exc:
        raise Invalid(f"Invalid bandwidth inventory {text!r}: kbps must be integers") from exc
    vnics = tuple(v for v in parts[3].split("+") if v) if len(parts) == 4 else ("normal",)
    return BandwidthInventory(
        physnet=parts[0],
        egress_kbps=egress,
        ingress_kbps=ingress,
        vnic_types=vnics or ("normal",),
        hosts=frozenset(h for h in hosts.split("+") if h),
    )


def mapping_from_allocation(
    requests: PortRequests,
    allocations: Mapping[str, Mapping[str, int]],
    traits: Mapping[str, Iterable[str]],
) -> dict[str, tuple[str, ...]]:
    """Request group -> provider from a consumer's current allocation, when no allocation
    request says it (a move's destination, a revert: Nova's
    ``fill_provider_mapping_based_on_allocation``): each group goes to a provider with its
    required traits whose allocation still holds the group's resources."""
    left = {rp: dict(amounts) for rp, amounts in allocations.items()}
    mapping: dict[str, tuple[str, ...]] = {}
    for group in requests.groups:
        for rp in sorted(left):
            amounts = left[rp]
            fits = all(amounts.get(rc, 0) >= n for rc, n in group.resources.items())
            if fits and set(group.required_traits) <= set(traits.get(rp, ())):
                for rc, n in group.resources.items():
                    amounts[rc] -= n
                mapping[group.requester_id] = (rp,)
                break
        else:
            raise Invalid(
                f"No resource provider of the allocation fulfils request group {group.requester_id}"
            )
    return mapping
