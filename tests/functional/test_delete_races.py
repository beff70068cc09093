"""A server deleted at every step of its build is gone from every list, and its quota, network
and Placement allocations are released (Nova's contract), on both transports.

Each case holds the build at one step with a gate on the role's collaborator, deletes the
server through the API, then lets the build go on.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
import sqlalchemy as sa

from openkeel.conductor.context import ConductorDeps
from openkeel.db.schema import api as api_schema
from openkeel.db.schema import cell as cell_schema
from tests.functional.conftest import Cloud, Gate


class _Held:
    """Wraps a callable so that its first call waits (before or after running) for release."""

    def __init__(self, function: Callable[..., Any], *, after: bool = False) -> None:
        self._function = function
        self._after = after
        self.reached = threading.Event()
        self._release = threading.Event()
        self._first = True

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        first, self._first = self._first, False
        if first and not self._after:
            self._hold()
        result = self._function(*args, **kwargs)
        if first and self._after:
            self._hold()
        return result

    def _hold(self) -> None:
        self.reached.set()
        assert self._release.wait(30), "the test never released the build"

    def release(self) -> None:
        self._release.set()


class _HeldScheduler:
    """The conductor's scheduler client with ``select_destinations`` held."""

    def __init__(self, real: Any, *, after: bool) -> None:
        self._real = real
        self.select_destinations = _Held(real.select_destinations, after=after)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


def _hold_step(cloud: Cloud, step: str) -> Callable[[], None] | _Held:
    """Install a hold at ``step``; returns the hold (``reached`` / ``release``)."""
    assert cloud.roles.conductor is not None
    deps: ConductorDeps = cloud.roles.conductor.deps
    if step in ("accepted", "scheduled"):
        held_scheduler = _HeldScheduler(deps.scheduler, after=step == "scheduled")
        deps.scheduler = held_scheduler  # type: ignore[assignment]
        return held_scheduler.select_destinations
    if step == "created-in-cell":
        held = _Held(deps.hand_over)
        deps.hand_over = held  # type: ignore[method-assign]
        return held
    if step == "mapped":
        held = _Held(deps.cast_build)
        deps.cast_build = held  # type: ignore[method-assign]
        return held
    raise AssertionError(step)


def _assert_nothing_left(cloud: Cloud, server_id: str) -> None:
    """Poll (the build goes on asynchronously after the delete) until nothing of the server is
    left, then check once more to show what is."""
    cloud.wait(server_id, gone=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            _check_nothing_left(cloud, server_id)
            return
        except AssertionError:
            time.sleep(0.05)  # polling real asynchrony (RPC casts), bounded by the deadline
    _check_nothing_left(cloud, server_id)


def _check_nothing_left(cloud: Cloud, server_id: str) -> None:
    for path in ("/v2.1/servers", "/v2.1/servers/detail", "/v2.1/servers/detail?all_tenants=1"):
        listed = cloud.api.get(path, version="latest").json()["servers"]
        assert server_id not in [s["id"] for s in listed], path
    quota = cloud.api.get("/v2.1/os-quota-sets/admin/detail").json()["quota_set"]
    assert {k: quota[k]["in_use"] for k in ("instances", "cores", "ram")} == {
        "instances": 0,
        "cores": 0,
        "ram": 0,
    }
    assert cloud.placement.get_allocations(server_id).allocations == {}
    assert cloud.usage() == {}
    with cloud.services.api_db.connect() as conn:
        # Request specs and mappings of scheduled servers stay until the operator archives
        # deleted rows, as in Nova; a build request never outlives its server.
        table = api_schema.build_requests
        left = conn.execute(sa.select(table).where(table.c.instance_uuid == server_id)).all()
        assert left == [], table.name
    instances = cell_schema.instances
    for engine in cloud.services.cell_dbs.values():
        with engine.connect() as conn:
            live = conn.execute(
                sa.select(instances.c.vm_state).where(
                    instances.c.uuid == server_id, instances.c.deleted == 0
                )
            ).all()
        assert live == []
    for compute in cloud.computes.values():
        assert server_id not in compute.host.driver.list_instance_uuids()


@pytest.mark.parametrize("step", ["accepted", "scheduled", "created-in-cell", "mapped"])
def test_delete_while_the_conductor_holds_the_build(cloud: Cloud, step: str) -> None:
    hold = _hold_step(cloud, step)
    assert isinstance(hold, _Held)
    created = cloud.boot(f"race-{step}", networks="auto")
    try:
        assert hold.reached.wait(30), f"the build never reached {step}"
        assert cloud.api.delete(f"/v2.1/servers/{created['id']}").status_code == 204
    finally:
        hold.release()
    _assert_nothing_left(cloud, created["id"])


def test_delete_while_compute_spawns(cloud: Cloud) -> None:
    gate = Gate()
    cloud.gates.append(gate)
    for host in list(cloud.computes):  # only the gated host may take the build
        services = cloud.api.get(f"/v2.1/os-services?host={host}", version="2.53").json()
        disable = {"status": "disabled", "disabled_reason": "out of the way"}
        path = f"/v2.1/os-services/{services['services'][0]['id']}"
        assert cloud.api.put(path, disable, version="2.53").status_code == 200
    cloud.add_compute(delays={"spawn": 1.0}, sleep=gate.sleep)
    created = cloud.boot("race-spawning", networks="auto")
    try:
        assert gate.entered.wait(30), "no build reached the driver"
        assert cloud.api.delete(f"/v2.1/servers/{created['id']}").status_code == 204
    finally:
        gate.release()
    _assert_nothing_left(cloud, created["id"])


def test_twenty_boot_then_delete_at_once_leave_nothing(cloud: Cloud) -> None:
    """The reported case: create with networks auto and delete at once, twenty times."""
    ids = []
    for index in range(20):
        created = cloud.boot(f"quick-{index}", networks="auto")
        assert cloud.api.delete(f"/v2.1/servers/{created['id']}").status_code == 204
        ids.append(created["id"])
    for server_id in ids:
        _assert_nothing_left(cloud, server_id)


def test_delete_while_the_host_is_down_frees_the_allocation(cloud: Cloud) -> None:
    """Nova's local delete: the API itself releases what the dead host cannot."""
    server = cloud.wait(cloud.boot("orphaned-host")["id"])
    assert server["status"] == "ACTIVE" and cloud.usage() != {}
    (host,) = cloud.computes
    services = cloud.api.get(f"/v2.1/os-services?host={host}", version="2.53").json()
    path = f"/v2.1/os-services/{services['services'][0]['id']}"
    assert cloud.api.put(path, {"forced_down": True}, version="2.53").status_code == 200
    assert cloud.api.delete(f"/v2.1/servers/{server['id']}").status_code == 204
    cloud.wait(server["id"], gone=True)
    assert cloud.placement.get_allocations(server["id"]).allocations == {}
