"""Waiting for ``network-vif-plugged`` while a guest's VIFs are plugged (Nova's
``_create_guest_with_network`` wait), honouring ``[DEFAULT] vif_plugging_timeout`` and
``vif_plugging_is_fatal``.

Called by the build, the rebuild (evacuation) and the unshelve around ``driver.spawn``. Only VIFs whose port is not active yet are waited
for, and only with a network adapter whose backend sends the event (Neutron). A timeout or a
``failed`` event fails the spawn (``VirtualInterfaceCreateFailed``: the build then cleans up and
reschedules or goes to ERROR with that fault) when fatal; otherwise it is logged and the build
goes on.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from openkeel.compute.event_waiters import EventFailed, EventTimeout
from openkeel.compute.host import ComputeHost
from openkeel.domain.errors import ComputeError

LOG = logging.getLogger(__name__)
EVENT = "network-vif-plugged"


class VirtualInterfaceCreateFailed(ComputeError):
    """Nova's VirtualInterfaceCreateException."""

    def __init__(self) -> None:
        super().__init__("Virtual Interface creation failed")


def awaited_events(host: ComputeHost, network_info: Sequence[Any]) -> list[tuple[str, str | None]]:
    """The (event, port id) pairs a spawn with ``network_info`` waits for."""
    if not (host.network.sends_vif_plugged_events and host.conf.vif_plugging_timeout):
        return []
    return [(EVENT, str(vif["id"])) for vif in network_info if vif.get("active", True) is False]


@contextmanager
def plugging_vifs(host: ComputeHost, uuid: str, network_info: Sequence[Any]) -> Iterator[None]:
    """Arm the waiters, run the block (the spawn that plugs the VIFs), then wait for them."""
    events = awaited_events(host, network_info)
    if not events:
        yield
        return
    fatal = bool(host.conf.vif_plugging_is_fatal)
    try:
        with host.events.waiting_for(uuid, events, float(host.conf.vif_plugging_timeout)):
            yield
    except EventTimeout as exc:
        if fatal:
            LOG.error("Timeout waiting for %s for instance %s", [e[1] for e in events], uuid)
            raise VirtualInterfaceCreateFailed() from exc
        LOG.warning("Timeout waiting for vif plugging callback for instance %s, continuing", uuid)
    except EventFailed as exc:
        if fatal:
            LOG.error("Neutron reported failure on event %s", exc)
            raise VirtualInterfaceCreateFailed() from exc
        LOG.warning("Neutron reported failure on event %s, continuing", exc)
