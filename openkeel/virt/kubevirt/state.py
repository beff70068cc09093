"""Power states from KubeVirt objects, and the once-only lifecycle event bookkeeping.

Used by the KubeVirt driver: ``power_state`` reads a VirtualMachineInstance the way
docs/kubevirt-mapping §7 says; ``PowerTracker`` turns observed states into Nova lifecycle events
exactly once, whether the driver's own polling or the VMI watch sees a change first. Every
observation carries an etcd resourceVersion; an observation not newer than the last one applied
is stale (a late watch event) and ignored.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime

from openkeel.domain.states import PowerState
from openkeel.virt.kubevirt.client import JsonObj
from openkeel.virt.kubevirt.manifests import naming
from openkeel.virt.model import LifecycleEvent, LifecycleTransition

ANNOTATION_SUSPENDED = f"{naming.DOMAIN}/suspended"
_STARTING_PHASES = {"", "Pending", "Scheduling", "Scheduled"}
T = LifecycleTransition
_P = PowerState
_TRANSITIONS: dict[tuple[PowerState, PowerState], LifecycleTransition] = {
    (_P.SHUTDOWN, _P.RUNNING): T.STARTED,
    (_P.CRASHED, _P.RUNNING): T.STARTED,
    (_P.PAUSED, _P.RUNNING): T.RESUMED,
    (_P.SUSPENDED, _P.RUNNING): T.RESUMED,
    (_P.RUNNING, _P.SHUTDOWN): T.STOPPED,
    (_P.PAUSED, _P.SHUTDOWN): T.STOPPED,
    (_P.SUSPENDED, _P.SHUTDOWN): T.STOPPED,
    (_P.RUNNING, _P.PAUSED): T.PAUSED,
    (_P.RUNNING, _P.SUSPENDED): T.SUSPENDED,
    (_P.PAUSED, _P.SUSPENDED): T.SUSPENDED,
    # A guest that crashed or lost its node (VMI Failed) stopped, as libvirt reports a
    # crashed domain: the compute host's sync then calls the stop API.
    (_P.RUNNING, _P.CRASHED): T.STOPPED,
    (_P.PAUSED, _P.CRASHED): T.STOPPED,
    (_P.SUSPENDED, _P.CRASHED): T.STOPPED,
}


def condition(obj: JsonObj, kind: str) -> bool:
    """True if status condition ``kind`` is "True"."""
    for cond in obj.get("status", {}).get("conditions", []) or []:
        if cond.get("type") == kind:
            return bool(cond.get("status") == "True")
    return False


def power_state(vmi: JsonObj | None) -> PowerState:
    """Power state of a server from its VMI (None: no VMI, the VM is stopped)."""
    if vmi is None:
        return PowerState.SHUTDOWN
    phase = vmi.get("status", {}).get("phase", "")
    if phase in _STARTING_PHASES:
        return PowerState.NOSTATE
    if phase == "Succeeded":
        return PowerState.SHUTDOWN
    if phase == "Failed":
        return PowerState.CRASHED
    if phase != "Running":
        return PowerState.NOSTATE
    if condition(vmi, "Paused"):
        annotations = vmi.get("metadata", {}).get("annotations", {}) or {}
        suspended = annotations.get(ANNOTATION_SUSPENDED) == "true"
        return PowerState.SUSPENDED if suspended else PowerState.PAUSED
    return PowerState.RUNNING


def resource_version(obj: JsonObj) -> int:
    try:
        return int(obj.get("metadata", {}).get("resourceVersion", "0"))
    except ValueError:
        return 0


class PowerTracker:
    """Last applied (power state, resourceVersion) per server; emits on real transitions."""

    def __init__(self, emit: Callable[[LifecycleEvent], None]) -> None:
        self._emit = emit
        self._lock = threading.Lock()
        self._known: dict[str, tuple[PowerState, int]] = {}

    def observe(self, uuid: str, state: PowerState, version: int, *, silent: bool = False) -> None:
        """Apply an observation; transitional (NOSTATE) ones are not recorded."""
        if state == PowerState.NOSTATE:
            return
        with self._lock:
            previous = self._known.get(uuid)
            if previous is not None and version and version <= previous[1]:
                return
            self._known[uuid] = (state, version or (previous[1] if previous else 0))
        if previous is None or silent or previous[0] == state:
            return
        transition = _TRANSITIONS.get((previous[0], state))
        if transition is not None:
            self._emit(LifecycleEvent(uuid, transition, datetime.now(UTC)))

    def known(self, uuid: str) -> PowerState | None:
        with self._lock:
            entry = self._known.get(uuid)
        return entry[0] if entry else None
