"""The ovo-style envelope of versioned payloads and the value spellings Nova's notification
fields use (ISO times with ``Z``, power state names). Pure; used by every payload builder."""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

NAMESPACE = "nova"

# Nova's InstancePowerState field: the driver's integer power state by name.
POWER_STATES = {
    0: "pending",
    1: "running",
    3: "paused",
    4: "shutdown",
    6: "crashed",
    7: "suspended",
}


def ovo(name: str, version: str, data: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` wrapped as Nova serializes a notification object."""
    return {
        "nova_object.name": name,
        "nova_object.namespace": NAMESPACE,
        "nova_object.version": version,
        "nova_object.data": dict(data),
    }


def fixed_addresses(
    network_info: Iterable[Mapping[str, Any]],
) -> Iterator[tuple[Mapping[str, Any], Mapping[str, Any], Mapping[str, Any], Mapping[str, Any]]]:
    """(vif, network, subnet, ip) for each fixed address of Nova's network model."""
    for vif in network_info:
        network = vif.get("network") or {}
        for subnet in network.get("subnets") or ():
            for ip in subnet.get("ips") or ():
                yield vif, network, subnet, ip


def iso(value: datetime.datetime | None) -> str | None:
    """A time as a versioned payload writes it (``2012-10-29T13:42:11Z``), None as None."""
    if value is None:
        return None
    if value.tzinfo is not None:
        value = value.astimezone(datetime.UTC).replace(tzinfo=None)
    return value.strftime("%Y-%m-%dT%H:%M:%SZ")


def power_state_name(value: int | None) -> str:
    """Nova's name of a power state (unknown or unset: ``pending``, as NOSTATE)."""
    return POWER_STATES.get(value or 0, "pending")


def unwrap(value: Any) -> Any:
    """Nova's versioned-object envelopes stripped (``{"nova_object.data": {...}}``), at every
    depth: what a Nova peer sends as an object, as plain dicts."""
    if isinstance(value, Mapping):
        if "nova_object.data" in value:
            return unwrap(value["nova_object.data"])
        return {str(k): unwrap(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [unwrap(v) for v in value]
    return value
