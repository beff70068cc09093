"""The build's wait for network-vif-plugged (openkeel.compute.vif_plugging) without a network
service: which VIFs are awaited, and what a timeout or a failed event does when fatal or not.
(tests/functional/test_neutron_vif_plugging.py runs it against a real neutron-server.)"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from openkeel.compute.event_waiters import InstanceEventWaiters
from openkeel.compute.vif_plugging import (
    VirtualInterfaceCreateFailed,
    awaited_events,
    plugging_vifs,
)
from openkeel.rpc.messages.compute import ExternalEvent

UUID = "7c1a8a61-5c8e-4a4f-9a3e-000000000001"
INFO = [{"id": "port-a", "active": False}, {"id": "port-b", "active": True}, {"id": "port-c"}]


def _host(sends: bool = True, timeout: float = 300, fatal: bool = True) -> Any:
    """What plugging_vifs reads of a compute host."""
    return SimpleNamespace(
        network=SimpleNamespace(sends_vif_plugged_events=sends),
        conf=SimpleNamespace(vif_plugging_timeout=timeout, vif_plugging_is_fatal=fatal),
        events=InstanceEventWaiters(),
    )


def test_only_inactive_ports_of_a_backend_that_reports_them_are_awaited() -> None:
    assert awaited_events(_host(), INFO) == [("network-vif-plugged", "port-a")]
    assert awaited_events(_host(sends=False), INFO) == []
    assert awaited_events(_host(timeout=0), INFO) == []


def test_the_spawn_goes_on_once_the_event_arrived() -> None:
    host = _host()
    with plugging_vifs(host, UUID, INFO):
        assert host.events.pending(UUID) == ["network-vif-plugged-port-a"]
        assert host.events.deliver(ExternalEvent(UUID, "network-vif-plugged", tag="port-a"))
    assert host.events.pending(UUID) == []


@pytest.mark.parametrize("fatal", [True, False])
def test_a_timeout_fails_the_spawn_only_when_fatal(fatal: bool) -> None:
    host = _host(timeout=0.01, fatal=fatal)
    if fatal:
        expected = pytest.raises(VirtualInterfaceCreateFailed, match="Virtual Interface creation")
        with expected, plugging_vifs(host, UUID, INFO):
            pass
    else:
        with plugging_vifs(host, UUID, INFO):
            pass
    assert host.events.pending(UUID) == []


@pytest.mark.parametrize("fatal", [True, False])
def test_a_failed_event_fails_the_spawn_only_when_fatal(fatal: bool) -> None:
    host = _host(fatal=fatal)
    failed = ExternalEvent(UUID, "network-vif-plugged", "failed", "port-a")
    if fatal:
        with pytest.raises(VirtualInterfaceCreateFailed), plugging_vifs(host, UUID, INFO):
            host.events.deliver(failed)
    else:
        with plugging_vifs(host, UUID, INFO):
            host.events.deliver(failed)


def test_a_spawn_that_raises_withdraws_its_waiters() -> None:
    host = _host()
    with pytest.raises(RuntimeError), plugging_vifs(host, UUID, INFO):
        raise RuntimeError("spawn failed")
    assert host.events.pending(UUID) == []
