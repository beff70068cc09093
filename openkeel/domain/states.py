"""Instance vm/task/power states, the API ``status`` map and the per-action state gates.

Pure data and functions used by the servers API (status in views, ``?status=`` filter, 409 on
actions in the wrong state), by compute (power state sync, notifications) and by conductor. The
values are Nova's wire values: they are stored in ``instances.vm_state``/``task_state``/
``power_state`` and shown to clients as ``OS-EXT-STS:*``, so they must never change.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from openkeel.domain.errors import Conflict


class VmState(enum.StrEnum):
    """The stable state of an instance (``instances.vm_state``)."""

    ACTIVE = "active"
    BUILDING = "building"
    PAUSED = "paused"
    SUSPENDED = "suspended"
    STOPPED = "stopped"
    RESCUED = "rescued"
    RESIZED = "resized"
    SOFT_DELETED = "soft-delete"
    DELETED = "deleted"
    ERROR = "error"
    SHELVED = "shelved"
    SHELVED_OFFLOADED = "shelved_offloaded"


class TaskState(enum.StrEnum):
    """The transition in progress (``instances.task_state``; NULL/None when idle)."""

    SCHEDULING = "scheduling"
    BLOCK_DEVICE_MAPPING = "block_device_mapping"
    NETWORKING = "networking"
    SPAWNING = "spawning"
    IMAGE_SNAPSHOT = "image_snapshot"
    IMAGE_SNAPSHOT_PENDING = "image_snapshot_pending"
    IMAGE_PENDING_UPLOAD = "image_pending_upload"
    IMAGE_UPLOADING = "image_uploading"
    IMAGE_BACKUP = "image_backup"
    UPDATING_PASSWORD = "updating_password"
    RESIZE_PREP = "resize_prep"
    RESIZE_MIGRATING = "resize_migrating"
    RESIZE_MIGRATED = "resize_migrated"
    RESIZE_FINISH = "resize_finish"
    RESIZE_REVERTING = "resize_reverting"
    RESIZE_CONFIRMING = "resize_confirming"
    REBOOTING = "rebooting"
    REBOOT_PENDING = "reboot_pending"
    REBOOT_STARTED = "reboot_started"
    REBOOTING_HARD = "rebooting_hard"
    REBOOT_PENDING_HARD = "reboot_pending_hard"
    REBOOT_STARTED_HARD = "reboot_started_hard"
    PAUSING = "pausing"
    UNPAUSING = "unpausing"
    SUSPENDING = "suspending"
    RESUMING = "resuming"
    POWERING_OFF = "powering-off"
    POWERING_ON = "powering-on"
    RESCUING = "rescuing"
    UNRESCUING = "unrescuing"
    REBUILDING = "rebuilding"
    REBUILD_BLOCK_DEVICE_MAPPING = "rebuild_block_device_mapping"
    REBUILD_SPAWNING = "rebuild_spawning"
    MIGRATING = "migrating"
    DELETING = "deleting"
    SOFT_DELETING = "soft-deleting"
    RESTORING = "restoring"
    SHELVING = "shelving"
    SHELVING_IMAGE_PENDING_UPLOAD = "shelving_image_pending_upload"
    SHELVING_IMAGE_UPLOADING = "shelving_image_uploading"
    SHELVING_OFFLOADING = "shelving_offloading"
    UNSHELVING = "unshelving"


class PowerState(enum.IntEnum):
    """What the hypervisor reports (``instances.power_state``, an integer in DB and API).

    Values 2 and 5 are unused on purpose: the integers are on the wire and in databases.
    """

    NOSTATE = 0
    RUNNING = 1
    PAUSED = 3
    SHUTDOWN = 4
    CRASHED = 6
    SUSPENDED = 7

    @property
    def notification_name(self) -> str:
        """The string versioned notifications carry for this power state."""
        return _POWER_STATE_NAMES[self]


_POWER_STATE_NAMES: Mapping[PowerState, str] = {
    PowerState.NOSTATE: "pending",
    PowerState.RUNNING: "running",
    PowerState.PAUSED: "paused",
    PowerState.SHUTDOWN: "shutdown",
    PowerState.CRASHED: "crashed",
    PowerState.SUSPENDED: "suspended",
}

# Nova's named groupings; other modules gate on these.
ALLOW_SOFT_REBOOT: frozenset[VmState] = frozenset({VmState.ACTIVE})
ALLOW_HARD_REBOOT: frozenset[VmState] = ALLOW_SOFT_REBOOT | {
    VmState.STOPPED,
    VmState.PAUSED,
    VmState.SUSPENDED,
    VmState.ERROR,
}
ALLOW_TRIGGER_CRASH_DUMP: frozenset[VmState] = frozenset(
    {VmState.ACTIVE, VmState.PAUSED, VmState.RESCUED, VmState.RESIZED, VmState.ERROR}
)
ALLOW_TARGET_STATES: frozenset[VmState] = frozenset({VmState.STOPPED})

SOFT_REBOOT_STATES = frozenset(
    {TaskState.REBOOTING, TaskState.REBOOT_PENDING, TaskState.REBOOT_STARTED}
)
HARD_REBOOT_STATES = frozenset(
    {TaskState.REBOOTING_HARD, TaskState.REBOOT_PENDING_HARD, TaskState.REBOOT_STARTED_HARD}
)
REBUILD_STATES = frozenset(
    {TaskState.REBUILDING, TaskState.REBUILD_BLOCK_DEVICE_MAPPING, TaskState.REBUILD_SPAWNING}
)
RESIZING_STATES = frozenset(
    {
        TaskState.RESIZE_PREP,
        TaskState.RESIZE_MIGRATING,
        TaskState.RESIZE_MIGRATED,
        TaskState.RESIZE_FINISH,
    }
)
# A hard reboot may interrupt these in-flight tasks (None = idle).
ALLOW_REBOOT: frozenset[TaskState | None] = frozenset(
    {
        None,
        *SOFT_REBOOT_STATES,
        TaskState.RESUMING,
        TaskState.REBOOTING_HARD,
        TaskState.UNPAUSING,
        TaskState.PAUSING,
        TaskState.SUSPENDING,
    }
)


def _row(default: str, **overrides: Iterable[TaskState]) -> tuple[str, Mapping[str, str]]:
    by_task = {task.value: status for status, tasks in overrides.items() for task in tasks}
    return default, by_task


# vm_state -> (status when no override applies, task_state -> status). A task state without an
# override (e.g. ``deleting``) leaves the status of the stable state visible to the client.
STATUS_MAP: Mapping[str, tuple[str, Mapping[str, str]]] = {
    VmState.ACTIVE: _row(
        "ACTIVE",
        REBOOT=SOFT_REBOOT_STATES,
        HARD_REBOOT=HARD_REBOOT_STATES,
        PASSWORD=[TaskState.UPDATING_PASSWORD],
        REBUILD=REBUILD_STATES,
        MIGRATING=[TaskState.MIGRATING],
        RESIZE=RESIZING_STATES,
    ),
    VmState.BUILDING: _row("BUILD"),
    VmState.STOPPED: _row("SHUTOFF", RESIZE=RESIZING_STATES, REBUILD=REBUILD_STATES),
    # RESIZE_CONFIRMING has no status of its own: the API shows VERIFY_RESIZE until done.
    VmState.RESIZED: _row("VERIFY_RESIZE", REVERT_RESIZE=[TaskState.RESIZE_REVERTING]),
    VmState.PAUSED: _row("PAUSED", MIGRATING=[TaskState.MIGRATING]),
    VmState.SUSPENDED: _row("SUSPENDED"),
    VmState.RESCUED: _row("RESCUE"),
    VmState.ERROR: _row("ERROR", REBUILD=REBUILD_STATES),
    VmState.DELETED: _row("DELETED"),
    VmState.SOFT_DELETED: _row("SOFT_DELETED"),
    VmState.SHELVED: _row("SHELVED"),
    VmState.SHELVED_OFFLOADED: _row("SHELVED_OFFLOADED"),
}

UNKNOWN_STATUS = "UNKNOWN"


def status_from_state(vm_state: str | None, task_state: str | None = None) -> str:
    """The API ``status`` of a server; ``UNKNOWN`` for a vm_state Nova does not know."""
    row = STATUS_MAP.get(vm_state) if vm_state is not None else None
    if row is None:
        return UNKNOWN_STATUS
    default, by_task = row
    if task_state is None:
        return default
    return by_task.get(task_state, default)


@dataclass(frozen=True)
class StatusFilter:
    """DB filter equivalent to a list of API statuses (``GET /servers?status=``).

    ``any_task_state`` is True when one of the statuses is the default of a vm_state row: then
    the task state must not be filtered (a server being deleted still matches ``ACTIVE``).
    """

    vm_states: tuple[str, ...]
    task_states: tuple[str, ...]
    any_task_state: bool

    @property
    def matches_nothing(self) -> bool:
        """True when no status was recognised (400 from 2.38, empty list before)."""
        return not self.vm_states


def states_from_statuses(statuses: Iterable[str]) -> StatusFilter:
    """Expand API statuses (case-insensitive) into vm_states and task_states to filter on."""
    wanted = {status.lower() for status in statuses}
    vm_states: set[str] = set()
    task_states: set[str] = set()
    any_task = False
    for vm_state, (default, by_task) in STATUS_MAP.items():
        if default.lower() in wanted:
            vm_states.add(vm_state)
            any_task = True
        for task_state, status in by_task.items():
            if status.lower() in wanted:
                vm_states.add(vm_state)
                task_states.add(task_state)
    return StatusFilter(tuple(sorted(vm_states)), tuple(sorted(task_states)), any_task)


def allows_resource_removal(vm_state: str | None, task_state: str | None = None) -> bool:
    """True once an instance no longer holds host resources (deleted, or offloaded and idle)."""
    if vm_state == VmState.DELETED:
        return True
    return vm_state == VmState.SHELVED_OFFLOADED and task_state != TaskState.SPAWNING


# --- Per-action state gates -----------------------------------------------------------------

_ANY = None  # a gate field of None means "any value passes"


@dataclass(frozen=True)
class ActionGate:
    """States in which one compute API operation may start.

    ``vm_states``/``task_states`` of None accept anything; ``None`` inside ``task_states`` is
    the idle task state. ``rejects`` inverts the check (the listed task states are refused).
    ``api_action`` is the name the REST API puts in its 409 message.
    """

    api_action: str
    vm_states: frozenset[str] | None = _ANY
    task_states: frozenset[str | None] | None = frozenset({None})
    must_have_launched: bool = True
    rejects: bool = False


def _vm(*states: VmState) -> frozenset[str]:
    return frozenset(states)


_RUNNING_OR_STOPPED = _vm(VmState.ACTIVE, VmState.STOPPED, VmState.PAUSED, VmState.SUSPENDED)
_VOLUME_STATES = _vm(
    VmState.ACTIVE,
    VmState.PAUSED,
    VmState.STOPPED,
    VmState.RESIZED,
    VmState.SOFT_DELETED,
    VmState.SHELVED,
    VmState.SHELVED_OFFLOADED,
)
_INTERFACE_STATES = _vm(VmState.ACTIVE, VmState.PAUSED, VmState.STOPPED)
_METADATA_STATES = _vm(VmState.ACTIVE, VmState.PAUSED, VmState.SUSPENDED, VmState.STOPPED)
_CONSOLE_REJECTS: frozenset[str | None] = frozenset({TaskState.DELETING, TaskState.MIGRATING})

# Keyed by the compute API operation; values are Nova's ``check_instance_state`` /
# ``reject_instance_state`` arguments for the method of the same name.
ACTION_GATES: Mapping[str, ActionGate] = {
    "delete": ActionGate("delete", task_states=_ANY, must_have_launched=False),
    # Nova's forceDelete does not catch this error (its API answers 500); we name it anyway.
    "force_delete": ActionGate("forceDelete", task_states=_ANY, must_have_launched=False),
    # A soft delete refused here falls back to a hard delete in the API, never a 409.
    "soft_delete": ActionGate("delete", task_states=_ANY),
    "restore": ActionGate("restore", _vm(VmState.SOFT_DELETED)),
    "stop": ActionGate("stop", _vm(VmState.ACTIVE, VmState.ERROR)),
    "start": ActionGate("start", _vm(VmState.STOPPED)),
    "trigger_crash_dump": ActionGate("trigger_crash_dump", ALLOW_TRIGGER_CRASH_DUMP),
    "soft_reboot": ActionGate("reboot", ALLOW_SOFT_REBOOT),
    "hard_reboot": ActionGate("reboot", ALLOW_HARD_REBOOT, frozenset(ALLOW_REBOOT)),
    "rebuild": ActionGate("rebuild", _vm(VmState.ACTIVE, VmState.STOPPED, VmState.ERROR)),
    "resize": ActionGate("resize", _vm(VmState.ACTIVE, VmState.STOPPED)),
    "confirm_resize": ActionGate("confirmResize", _vm(VmState.RESIZED)),
    "revert_resize": ActionGate("revertResize", _vm(VmState.RESIZED)),
    "snapshot": ActionGate("createImage", _RUNNING_OR_STOPPED),
    "snapshot_volume_backed": ActionGate("createImage", _RUNNING_OR_STOPPED),
    "backup": ActionGate("createBackup", _RUNNING_OR_STOPPED),
    "shelve": ActionGate("shelve", _RUNNING_OR_STOPPED),
    "shelve_offload": ActionGate("shelveOffload", _vm(VmState.SHELVED)),
    "unshelve": ActionGate("unshelve", _vm(VmState.SHELVED, VmState.SHELVED_OFFLOADED)),
    "pause": ActionGate("pause", _vm(VmState.ACTIVE)),
    "unpause": ActionGate("unpause", _vm(VmState.PAUSED)),
    "suspend": ActionGate("suspend", _vm(VmState.ACTIVE)),
    "resume": ActionGate("resume", _vm(VmState.SUSPENDED)),
    "rescue": ActionGate("rescue", _vm(VmState.ACTIVE, VmState.STOPPED, VmState.ERROR)),
    "unrescue": ActionGate("unrescue", _vm(VmState.RESCUED)),
    "set_admin_password": ActionGate("changePassword", _vm(VmState.ACTIVE)),
    "attach_volume": ActionGate("attach_volume", _VOLUME_STATES),
    "detach_volume": ActionGate("detach_volume", _VOLUME_STATES),
    "swap_volume": ActionGate("swap_volume", _vm(VmState.ACTIVE, VmState.PAUSED, VmState.RESIZED)),
    "attach_interface": ActionGate("attach_interface", _INTERFACE_STATES),
    "detach_interface": ActionGate("detach_interface", _INTERFACE_STATES),
    "update_instance_metadata": ActionGate("update metadata", _METADATA_STATES, _ANY),
    "delete_instance_metadata": ActionGate("delete metadata", _METADATA_STATES, _ANY),
    "live_migrate": ActionGate("os-migrateLive", _vm(VmState.ACTIVE, VmState.PAUSED)),
    "live_migrate_force_complete": ActionGate(
        "force_complete", _vm(VmState.ACTIVE), frozenset({TaskState.MIGRATING})
    ),
    "live_migrate_abort": ActionGate(
        "abort live migration", _ANY, frozenset({TaskState.MIGRATING})
    ),
    "evacuate": ActionGate("evacuate", _vm(VmState.ACTIVE, VmState.STOPPED, VmState.ERROR), _ANY),
    "get_vnc_console": ActionGate(
        "get_vnc_console", _ANY, _CONSOLE_REJECTS, must_have_launched=False, rejects=True
    ),
    "get_spice_console": ActionGate(
        "get_spice_console", _ANY, _CONSOLE_REJECTS, must_have_launched=False, rejects=True
    ),
    "get_serial_console": ActionGate(
        "get_serial_console", _ANY, _CONSOLE_REJECTS, must_have_launched=False, rejects=True
    ),
    "get_mks_console": ActionGate(
        "get_mks_console", _ANY, _CONSOLE_REJECTS, must_have_launched=False, rejects=True
    ),
}


class InstanceInvalidState(Conflict):
    """The instance is in a state that forbids the requested operation (409).

    ``attr`` is ``vm_state``, ``task_state`` or ``launched_at``; ``state`` the offending value.
    """

    def __init__(self, action: str, server_id: str, attr: str, state: str | None) -> None:
        if state is None:
            message = f"Instance {server_id} is in an invalid state for '{action}'"
        else:
            message = f"Cannot '{action}' instance {server_id} while it is in {attr} {state}"
        super().__init__(message)
        self.action = action
        self.server_id = server_id
        self.attr = attr
        self.state = state


def ensure_action_allowed(
    operation: str,
    *,
    server_id: str,
    vm_state: str | None,
    task_state: str | None,
    launched: bool,
    api_action: str | None = None,
) -> None:
    """Raise InstanceInvalidState unless ``operation`` may start in the given states.

    Checks run in Nova's order: vm_state, then task_state, then "was ever launched".
    ``api_action`` overrides the name in the message (``migrate`` shares ``resize``'s gate).
    """
    gate = ACTION_GATES[operation]
    action = api_action or gate.api_action
    vm_bad = gate.vm_states is not None and (vm_state in gate.vm_states) == gate.rejects
    if vm_bad:
        raise InstanceInvalidState(action, server_id, "vm_state", vm_state)
    task_bad = gate.task_states is not None and (task_state in gate.task_states) == gate.rejects
    if task_bad:
        raise InstanceInvalidState(action, server_id, "task_state", task_state)
    if gate.must_have_launched and not launched:
        raise InstanceInvalidState(action, server_id, "launched_at", None)
