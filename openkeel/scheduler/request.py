"""What the scheduler is asked: a typed ``SchedulingRequest`` parsed from a request spec.

The conductor sends the request spec as a primitive dict (``select_destinations(spec_obj=...)``);
:func:`parse_request_spec` reads these keys (all optional unless noted, unknown keys ignored,
Nova's ``nova_object.data`` envelopes unwrapped):

- ``flavor`` (required): ``{vcpus, memory_mb, root_gb, ephemeral_gb, swap, extra_specs}``
- ``image``: ``{id, properties: {hw_architecture, img_hv_type, hw_vm_mode, trait:X: required,
  traits_required: [...], ...}}``
- ``num_instances`` (default 1), ``availability_zone``, ``project_id``, ``user_id``,
  ``instance_uuid``
- ``scheduler_hints``: ``{name: value or [values]}`` (``same_host``, ``different_host``, ...)
- ``instance_group``: ``{uuid, policy, rules: {max_server_per_host}, hosts: [...],
  members: [...]}`` (a legacy ``policies: [p]`` list is accepted)
- ``ignore_hosts``, ``force_hosts``, ``force_nodes``: lists of names
- ``requested_destination``: ``{host, node, cell}`` (``cell`` a uuid or ``{uuid}``),
  ``aggregates``: ["a,b", "c"] (each entry: in one of those), ``forbidden_aggregates``
- ``is_bfv``: boot from volume (no DISK_GB for the root disk)
- ``requested_resources`` (ports' request groups) and ``request_level_params.same_subtree``
  (``openkeel.domain.resource_requests``, decision 0076)

Pure: used by ``openkeel.scheduler.selection``, filters and weighers.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from openkeel.domain.errors import Invalid
from openkeel.domain.resource_requests import PortRequests
from openkeel.notifications.envelope import unwrap

REBUILD_HINT = "_nova_check_type"


@dataclass(frozen=True)
class FlavorRequest:
    """The sizes and extra specs of the requested flavor."""

    vcpus: int
    memory_mb: int
    root_gb: int = 0
    ephemeral_gb: int = 0
    swap: int = 0
    extra_specs: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ImageRequest:
    """The image (id and properties) the server boots from."""

    id: str | None = None
    properties: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class GroupRequest:
    """The server group the instances join; ``hosts`` are hosts its members run on."""

    uuid: str | None
    policy: str | None
    rules: Mapping[str, Any] = field(default_factory=dict)
    hosts: frozenset[str] = frozenset()
    members: frozenset[str] = frozenset()

    @property
    def max_server_per_host(self) -> int:
        """The anti-affinity limit (rule from 2.64, else 1)."""
        return int(self.rules.get("max_server_per_host") or 1)


@dataclass(frozen=True)
class RequestedDestination:
    """A host/node/cell the request is restricted to (admin-requested or a move target)."""

    host: str | None = None
    node: str | None = None
    cell: str | None = None
    aggregates: tuple[tuple[str, ...], ...] = ()
    forbidden_aggregates: tuple[str, ...] = ()


@dataclass(frozen=True)
class SchedulingRequest:
    """One select_destinations request; ``instance_uuid`` is the instance being placed."""

    flavor: FlavorRequest
    image: ImageRequest = field(default_factory=ImageRequest)
    num_instances: int = 1
    availability_zone: str | None = None
    scheduler_hints: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    instance_group: GroupRequest | None = None
    project_id: str | None = None
    user_id: str | None = None
    instance_uuid: str | None = None
    ignore_hosts: frozenset[str] = frozenset()
    force_hosts: tuple[str, ...] = ()
    force_nodes: tuple[str, ...] = ()
    requested_destination: RequestedDestination | None = None
    is_bfv: bool = False
    port_requests: PortRequests = field(default_factory=PortRequests)

    @property
    def is_rebuild(self) -> bool:
        """A rebuild with a new image, checked on the instance's own host (Nova's
        ``_nova_check_type`` hint): filters that judge images only, nothing claimed."""
        return "rebuild" in self.hint(REBUILD_HINT)

    def hint(self, name: str) -> tuple[str, ...]:
        """The values of scheduler hint ``name`` (empty when absent)."""
        return self.scheduler_hints.get(name, ())

    def for_instance(self, instance_uuid: str) -> SchedulingRequest:
        """The same request while placing ``instance_uuid`` (multi-create)."""
        return dataclasses.replace(self, instance_uuid=instance_uuid)

    def with_group_hosts(self, hosts: frozenset[str]) -> SchedulingRequest:
        """The request with ``hosts`` added to the group's hosts (no-op without a group)."""
        group = self.instance_group
        if group is None:
            return self
        merged = dataclasses.replace(group, hosts=group.hosts | hosts)
        return dataclasses.replace(self, instance_group=merged)

    def with_group_members(self, members: frozenset[str]) -> SchedulingRequest:
        """The request with ``members`` added to the group's members."""
        group = self.instance_group
        if group is None:
            return self
        merged = dataclasses.replace(group, members=group.members | members)
        return dataclasses.replace(self, instance_group=merged)


def _int(data: Mapping[str, Any], key: str, default: int = 0) -> int:
    value = data.get(key)
    if value is None or value == "":
        return default
    try:
        return int(value)
    except (TypeError, ValueError) as exc:
        raise Invalid(f"Request spec field {key} is not an integer: {value!r}") from exc


def _names(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    return tuple(str(v) for v in value)


def _flavor(data: Any) -> FlavorRequest:
    if not isinstance(data, Mapping):
        raise Invalid("Request spec has no flavor")
    return FlavorRequest(
        vcpus=_int(data, "vcpus"),
        memory_mb=_int(data, "memory_mb"),
        root_gb=_int(data, "root_gb"),
        ephemeral_gb=_int(data, "ephemeral_gb"),
        swap=_int(data, "swap"),
        extra_specs={str(k): str(v) for k, v in (data.get("extra_specs") or {}).items()},
    )


def _group(data: Any) -> GroupRequest | None:
    if not isinstance(data, Mapping):
        return None
    policy = data.get("policy")
    if policy is None and data.get("policies"):
        policy = data["policies"][0]
    return GroupRequest(
        uuid=data.get("uuid"),
        policy=policy,
        rules=dict(data.get("rules") or {}),
        hosts=frozenset(_names(data.get("hosts"))),
        members=frozenset(_names(data.get("members"))),
    )


def _destination(data: Any) -> RequestedDestination | None:
    if not isinstance(data, Mapping):
        return None
    cell = data.get("cell")
    if isinstance(cell, Mapping):
        cell = cell.get("uuid")
    return RequestedDestination(
        host=data.get("host"),
        node=data.get("node"),
        cell=cell,
        aggregates=tuple(tuple(entry.split(",")) for entry in _names(data.get("aggregates"))),
        forbidden_aggregates=_names(data.get("forbidden_aggregates")),
    )


def parse_request_spec(spec: Mapping[str, Any]) -> SchedulingRequest:
    """The typed request for a request spec primitive (see the module docstring)."""
    data = unwrap(spec)
    image = data.get("image") or {}
    hints = data.get("scheduler_hints") or {}
    return SchedulingRequest(
        flavor=_flavor(data.get("flavor")),
        image=ImageRequest(id=image.get("id"), properties=dict(image.get("properties") or {})),
        num_instances=max(1, _int(data, "num_instances", 1)),
        availability_zone=data.get("availability_zone") or None,
        scheduler_hints={str(k): _names(v) for k, v in hints.items()},
        instance_group=_group(data.get("instance_group")),
        project_id=data.get("project_id"),
        user_id=data.get("user_id"),
        instance_uuid=data.get("instance_uuid"),
        ignore_hosts=frozenset(_names(data.get("ignore_hosts"))),
        force_hosts=_names(data.get("force_hosts")),
        force_nodes=_names(data.get("force_nodes")),
        requested_destination=_destination(data.get("requested_destination")),
        is_bfv=bool(data.get("is_bfv")),
        port_requests=PortRequests.from_spec(data),
    )
