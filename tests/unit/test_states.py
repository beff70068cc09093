"""openkeel.domain.states compared exhaustively with Nova 34 (test-only oracle) plus exact cases."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pytest

from openkeel.domain import states
from openkeel.domain.errors import Conflict
from openkeel.domain.states import (
    ACTION_GATES,
    InstanceInvalidState,
    PowerState,
    TaskState,
    VmState,
    ensure_action_allowed,
    states_from_statuses,
    status_from_state,
)
from tests.conformance.nova_oracle import nova_module

UUID = "7a2b6a3c-54a1-4f0e-9c1e-6b1fd8e0b1a1"
ALL_VM: list[str | None] = [*VmState, "bogus", None]
ALL_TASK: list[str | None] = [*TaskState, None, "bogus"]
ALL_STATUSES = sorted(
    {
        status
        for default, by_task in states.STATUS_MAP.values()
        for status in (default, *by_task.values())
    }
)

pytestmark = pytest.mark.oracle


def _constants(module: Any, kind: type) -> dict[str, Any]:
    return {
        name: value
        for name, value in vars(module).items()
        if name.isupper() and isinstance(value, kind) and not name.startswith("ALLOW")
    }


def test_vm_states_are_novas() -> None:
    nova = _constants(nova_module("compute.vm_states"), str)
    assert {m.name: m.value for m in VmState} == nova


def test_task_states_are_novas() -> None:
    nova = _constants(nova_module("compute.task_states"), str)
    assert {m.name: m.value for m in TaskState} == nova


def test_power_states_and_notification_names_are_novas() -> None:
    power = nova_module("compute.power_state")
    assert {m.name: m.value for m in PowerState} == _constants(power, int)
    assert {int(m): m.notification_name for m in PowerState} == power.STATE_MAP


@pytest.mark.parametrize(
    "group",
    ["ALLOW_SOFT_REBOOT", "ALLOW_HARD_REBOOT", "ALLOW_TRIGGER_CRASH_DUMP", "ALLOW_TARGET_STATES"],
)
def test_vm_state_groups_are_novas(group: str) -> None:
    assert getattr(states, group) == set(getattr(nova_module("compute.vm_states"), group))


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        ("ALLOW_REBOOT", "ALLOW_REBOOT"),
        ("SOFT_REBOOT_STATES", "soft_reboot_states"),
        ("HARD_REBOOT_STATES", "hard_reboot_states"),
        ("REBUILD_STATES", "rebuild_states"),
        ("RESIZING_STATES", "resizing_states"),
    ],
)
def test_task_state_groups_are_novas(ours: str, theirs: str) -> None:
    assert getattr(states, ours) == set(getattr(nova_module("compute.task_states"), theirs))


def test_status_of_every_state_pair_is_novas() -> None:
    nova_status: Callable[..., str] = nova_module("api.openstack.common").status_from_state
    for vm_state, task_state in itertools.product(ALL_VM, ALL_TASK):
        assert status_from_state(vm_state, task_state) == nova_status(vm_state, task_state), (
            vm_state,
            task_state,
        )


@pytest.mark.parametrize(
    ("vm_state", "task_state", "status"),
    [
        (VmState.ACTIVE, TaskState.DELETING, "ACTIVE"),
        (VmState.STOPPED, TaskState.DELETING, "SHUTOFF"),
        (VmState.ACTIVE, TaskState.REBOOT_STARTED_HARD, "HARD_REBOOT"),
        (VmState.ACTIVE, TaskState.UPDATING_PASSWORD, "PASSWORD"),
        (VmState.RESIZED, TaskState.RESIZE_CONFIRMING, "VERIFY_RESIZE"),
        (VmState.RESIZED, TaskState.RESIZE_REVERTING, "REVERT_RESIZE"),
        (VmState.PAUSED, TaskState.MIGRATING, "MIGRATING"),
        (VmState.ERROR, TaskState.REBUILD_SPAWNING, "REBUILD"),
        (VmState.SOFT_DELETED, None, "SOFT_DELETED"),
        ("bogus", None, "UNKNOWN"),
        (None, None, "UNKNOWN"),
    ],
)
def test_status_examples(vm_state: str | None, task_state: str | None, status: str) -> None:
    assert status_from_state(vm_state, task_state) == status


def _nova_reverse(statuses: list[str]) -> tuple[list[str], set[str], bool]:
    vm, task = nova_module("api.openstack.common").task_and_vm_state_from_status(statuses)
    return vm, set(task) - {"default"}, "default" in task


@pytest.mark.parametrize(
    "statuses",
    [[s] for s in ALL_STATUSES]
    + [[s.lower()] for s in ALL_STATUSES]
    + [list(pair) for pair in itertools.combinations(ALL_STATUSES, 2)]
    + [["nonsense"], [], ["Active", "reboot"]],
)
def test_status_filter_is_novas(statuses: list[str]) -> None:
    ours = states_from_statuses(statuses)
    vm, task, any_task = _nova_reverse(statuses)
    assert (list(ours.vm_states), set(ours.task_states), ours.any_task_state) == (
        vm,
        task,
        any_task,
    )
    assert ours.matches_nothing == (not vm and not task)


def test_status_filter_example() -> None:
    flt = states_from_statuses(["reboot"])
    assert flt == states.StatusFilter(
        ("active",), ("reboot_pending", "reboot_started", "rebooting"), False
    )


# --- action gates against the decorators on nova.compute.api.API ----------------------------

_NOVA_METHOD = {"soft_reboot": "_soft_reboot", "hard_reboot": "_hard_reboot"}


def _nova_gates() -> dict[str, tuple[Any, ...]]:
    """Every check/reject_instance_state decorator on Nova's compute API, read from closures."""
    api_cls = nova_module("compute.api").API
    found: dict[str, tuple[Any, ...]] = {}
    for name, func in vars(api_cls).items():
        while callable(func):
            code, closure = getattr(func, "__code__", None), getattr(func, "__closure__", None)
            if code is not None and closure:
                cells = dict(zip(code.co_freevars, (c.cell_contents for c in closure), strict=True))
                if {"vm_state", "task_state"} <= cells.keys():
                    rejects = "must_have_launched" not in cells
                    launched = cells.get("must_have_launched", False)
                    found[name] = (cells["vm_state"], cells["task_state"], launched, rejects)
            func = getattr(func, "__wrapped__", None)
    return found


def test_action_gates_cover_every_nova_gate() -> None:
    ours = {_NOVA_METHOD.get(name, name) for name in ACTION_GATES}
    assert ours == set(_nova_gates())


@pytest.mark.parametrize("operation", sorted(ACTION_GATES))
def test_action_gate_is_novas(operation: str) -> None:
    gate = ACTION_GATES[operation]
    vm, task, launched, rejects = _nova_gates()[_NOVA_METHOD.get(operation, operation)]
    assert (gate.vm_states, gate.task_states, gate.must_have_launched, gate.rejects) == (
        vm,
        task,
        launched,
        rejects,
    )


@pytest.mark.parametrize("operation", sorted(ACTION_GATES))
def test_ensure_action_allowed_decides_like_nova(operation: str) -> None:
    """Every (vm_state, task_state, launched) triple: allowed iff Nova's decorator lets it pass,
    and refused with the same attr/state Nova's exception carries."""
    gate = ACTION_GATES[operation]
    vm_gate, task_gate, must_launch, rejects = _nova_gates()[_NOVA_METHOD.get(operation, operation)]
    for vm_state, task_state, launched in itertools.product(ALL_VM, ALL_TASK, (True, False)):
        expected: tuple[str, str | None] | None = None
        if vm_gate is not None and (vm_state in vm_gate) == rejects:
            expected = ("vm_state", vm_state)
        elif task_gate is not None and (task_state in task_gate) == rejects:
            expected = ("task_state", task_state)
        elif must_launch and not launched:
            expected = ("launched_at", None)
        try:
            ensure_action_allowed(
                operation,
                server_id=UUID,
                vm_state=vm_state,
                task_state=task_state,
                launched=launched,
            )
            got = None
        except InstanceInvalidState as exc:
            assert exc.action == gate.api_action
            got = (exc.attr, exc.state)
        assert got == expected, (vm_state, task_state, launched)


def test_refusal_message_is_novas() -> None:
    with pytest.raises(InstanceInvalidState) as info:
        ensure_action_allowed(
            "pause", server_id=UUID, vm_state="stopped", task_state=None, launched=True
        )
    assert isinstance(info.value, Conflict)
    assert info.value.code == 409
    assert info.value.message == f"Cannot 'pause' instance {UUID} while it is in vm_state stopped"


def test_refusal_message_names_task_state_and_api_action() -> None:
    with pytest.raises(InstanceInvalidState) as info:
        ensure_action_allowed(
            "resize",
            server_id=UUID,
            vm_state="active",
            task_state="resize_prep",
            launched=True,
            api_action="migrate",
        )
    assert info.value.message == (
        f"Cannot 'migrate' instance {UUID} while it is in task_state resize_prep"
    )


def test_refusal_without_state_uses_novas_fallback_message() -> None:
    with pytest.raises(InstanceInvalidState) as info:
        ensure_action_allowed(
            "live_migrate_abort", server_id=UUID, vm_state="active", task_state=None, launched=True
        )
    assert (
        info.value.message == f"Instance {UUID} is in an invalid state for 'abort live migration'"
    )
    with pytest.raises(InstanceInvalidState) as info:
        ensure_action_allowed(
            "snapshot", server_id=UUID, vm_state="active", task_state=None, launched=False
        )
    assert info.value.message == f"Instance {UUID} is in an invalid state for 'createImage'"


def test_message_matches_novas_conflict_helper() -> None:
    common = nova_module("api.openstack.common")
    exception = nova_module("exception")
    nova_exc = exception.InstanceInvalidState(
        attr="vm_state", instance_uuid=UUID, state="paused", method="resize"
    )
    with pytest.raises(Exception) as nova_info:
        common.raise_http_conflict_for_instance_invalid_state(nova_exc, "resize", UUID)
    with pytest.raises(InstanceInvalidState) as info:
        ensure_action_allowed(
            "resize", server_id=UUID, vm_state="paused", task_state=None, launched=True
        )
    assert info.value.message == getattr(nova_info.value, "explanation", None)


def test_resource_removal_is_novas() -> None:
    nova = nova_module("compute.vm_states").allow_resource_removal
    for vm_state, task_state in itertools.product(ALL_VM, ALL_TASK):
        expected = nova(vm_state, task_state)
        assert states.allows_resource_removal(vm_state, task_state) == expected, vm_state
