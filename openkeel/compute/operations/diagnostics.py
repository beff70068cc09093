"""Diagnostics of a guest and the host itself: its uptime and the os-hosts actions (Nova's
get_diagnostics, get_instance_diagnostics, get_host_uptime, set_host_enabled,
host_power_action, host_maintenance_mode).

Called by the compute endpoint. A guest that is not running is refused as Nova refuses it (409
naming its power state); a driver without the feature is a 501. The answers are primitives: the
legacy driver mapping as is, the standard diagnostics as a document the API's view shapes.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from openkeel.compute import guest
from openkeel.compute.host import ComputeHost
from openkeel.compute.operations.build import power_state_of
from openkeel.domain.errors import Conflict, NotImplementedYet
from openkeel.domain.states import InstanceInvalidState, PowerState
from openkeel.virt.errors import NotSupported
from openkeel.virt.model import InstanceRef, JsonValue

NOT_SUPPORTED = "The requested functionality is not supported."


def _running_guest(host: ComputeHost, uuid: str) -> InstanceRef:
    instance = host.records.get(uuid)
    state = power_state_of(host, instance)
    if state != PowerState.RUNNING:
        # A Conflict with InstanceInvalidState's text: the domain class crosses RPC, this
        # state class (four arguments) would not.
        refused = InstanceInvalidState("get_diagnostics", uuid, "power state", state.notification_name)  # fmt: skip
        raise Conflict(str(refused))
    return guest.instance_ref(host.conf, instance)


def diagnostics(host: ComputeHost, uuid: str) -> dict[str, JsonValue]:
    """The driver's own diagnostics of a running guest."""
    ref = _running_guest(host, uuid)
    try:
        return host.driver.get_diagnostics(ref)
    except NotSupported as exc:
        raise NotImplementedYet(NOT_SUPPORTED) from exc


def instance_diagnostics(host: ComputeHost, uuid: str) -> dict[str, Any]:
    """The standard diagnostics of a running guest, as a document."""
    ref = _running_guest(host, uuid)
    try:
        found = host.driver.get_instance_diagnostics(ref)
    except NotSupported as exc:
        raise NotImplementedYet(NOT_SUPPORTED) from exc
    return dataclasses.asdict(found)


def host_uptime(host: ComputeHost) -> str:
    """The host's uptime line; 501 when the driver cannot tell."""
    try:
        return host.driver.get_host_uptime()
    except NotSupported as exc:
        raise NotImplementedYet(NOT_SUPPORTED) from exc


def set_host_enabled(host: ComputeHost, enabled: bool) -> str:
    """``"enabled"``/``"disabled"`` as the driver did it; 501 when it cannot."""
    try:
        return host.driver.set_host_enabled(enabled)
    except NotSupported as exc:
        raise NotImplementedYet(NOT_SUPPORTED) from exc


def host_power_action(host: ComputeHost, action: str) -> str:
    """The power action the driver did to the host; 501 when it cannot."""
    try:
        return host.driver.host_power_action(action)
    except NotSupported as exc:
        raise NotImplementedYet(NOT_SUPPORTED) from exc


def host_maintenance_mode(host: ComputeHost, mode: bool) -> str:
    """``"on_maintenance"``/``"off_maintenance"``; 501 when the driver has no such window."""
    try:
        return host.driver.host_maintenance_mode(mode)
    except NotSupported as exc:
        raise NotImplementedYet(NOT_SUPPORTED) from exc
