"""Shared plumbing of the KubeVirt driver: object lookup, power observation, waiting.

The driver's mixins (lifecycle in driver.py, migration.py, devices.py) build on
:class:`KubevirtBase`. A compute host manages one Kubernetes node (``node_for_host``, identity
by default); a server belongs to the node named in its VM's ``nova.openstack.org/node`` label.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import time
from collections.abc import Callable
from typing import TypeVar

from openkeel.domain.states import PowerState
from openkeel.virt import errors
from openkeel.virt.driver import ComputeDriver
from openkeel.virt.kubevirt import client as k
from openkeel.virt.kubevirt.client import JsonObj, KubeClient, KubeError
from openkeel.virt.kubevirt.manifests import naming
from openkeel.virt.kubevirt.manifests import vm as vm_manifests
from openkeel.virt.kubevirt.manifests.settings import KubevirtSettings
from openkeel.virt.kubevirt.nodes import parse_quantity
from openkeel.virt.kubevirt.state import PowerTracker, condition, power_state, resource_version
from openkeel.virt.kubevirt.virtapi import VirtApi
from openkeel.virt.model import InstanceRef, InstanceSpec

LOG = logging.getLogger(__name__)
T = TypeVar("T")

LABEL_NODE = f"{naming.DOMAIN}/node"  # the node (hypervisor) a server belongs to
NODE_NAME_LABEL = "kubevirt.io/nodeName"  # set on VMIs by virt-controller once scheduled
ANNOTATION_SPEC_HASH = f"{naming.DOMAIN}/spec-hash"


def spec_hash(vm: JsonObj) -> str:
    return hashlib.sha256(json.dumps(vm["spec"], sort_keys=True).encode()).hexdigest()[:16]


def vm_cpus(domain: JsonObj) -> int:
    cpu = domain.get("cpu", {}) or {}
    if "guest" in cpu:
        return int(cpu["guest"])
    return int(cpu.get("sockets", 1)) * int(cpu.get("cores", 1)) * int(cpu.get("threads", 1))


def vm_memory_mb(domain: JsonObj) -> int:
    memory = (domain.get("memory", {}) or {}).get("guest")
    if memory is None:
        memory = domain.get("resources", {}).get("requests", {}).get("memory", "0")
    return int(parse_quantity(memory) // 2**20)


class KubevirtBase(ComputeDriver):
    """State and helpers every KubeVirt driver operation uses."""

    name = "kubevirt"

    def __init__(
        self,
        client: KubeClient,
        settings: KubevirtSettings,
        virt_api: VirtApi,
        *,
        node_for_host: Callable[[str], str] | None = None,
        wait_timeout: float = 600.0,
        poll_interval: float = 0.02,
        watch_events: bool = True,
    ) -> None:
        super().__init__()
        self.client = client
        self.settings = settings
        self.virt_api = virt_api
        self.node_for_host = node_for_host or (lambda host: host)
        self.wait_timeout = wait_timeout
        self.poll_interval = poll_interval
        self.watch_events = watch_events
        self.host = ""
        self.tracker = PowerTracker(self.emit_event)

    @property
    def node(self) -> str:
        return self.node_for_host(self.host)

    # --- names -------------------------------------------------------------------------------

    def _ns(self, ref: InstanceRef) -> str:
        return naming.namespace_for(ref.project_id, self.settings.namespace_scheme)

    @staticmethod
    def _name(ref: InstanceRef) -> str:
        return naming.vm_name(ref.uuid)

    def _manifests(self, spec: InstanceSpec) -> vm_manifests.ServerManifests:
        built = vm_manifests.build_server(spec, self.settings, node_name=self.node)
        meta = built.vm["metadata"]
        meta["annotations"][ANNOTATION_SPEC_HASH] = spec_hash(built.vm)
        node = naming.label_value(self.node)
        meta["labels"][LABEL_NODE] = node
        # Secrets and DataVolumes name the node too, so that what a guest leaves behind is
        # found by the host that made it (list_leftover_uuids).
        for obj in (*built.secrets, *built.data_volumes):
            obj["metadata"].setdefault("labels", {})[LABEL_NODE] = node
        return built

    # --- lookups -----------------------------------------------------------------------------

    def _vm(self, ref: InstanceRef) -> JsonObj | None:
        vm = self.client.get_or_none(k.VMS, self._name(ref), self._ns(ref))
        if vm is None or vm["metadata"].get("deletionTimestamp"):
            return None
        return vm

    def _require_vm(self, ref: InstanceRef) -> JsonObj:
        vm = self._vm(ref)
        if vm is None:
            raise errors.InstanceNotFound(ref.uuid)
        return vm

    def _vmi(self, ref: InstanceRef) -> tuple[JsonObj | None, int]:
        """The VMI (or None) and the etcd revision this answer is current at."""
        found = self.client.request(
            "GET",
            k.VMIS.path(self._ns(ref)),
            params={"fieldSelector": f"metadata.name={self._name(ref)}"},
        )
        items = found.get("items", [])
        return (items[0] if items else None), resource_version(found)

    def _state(self, ref: InstanceRef) -> tuple[PowerState, JsonObj | None]:
        """Current power state, applied to the tracker (which emits transitions)."""
        vmi, version = self._vmi(ref)
        state = power_state(vmi)
        self.tracker.observe(ref.uuid, state, version)
        return state, vmi

    def _wait(self, ref: InstanceRef, wanted: set[PowerState], what: str) -> JsonObj | None:
        """Poll until the power state is in ``wanted``; return the VMI then. An API server
        that does not answer for a while (a restart, a network blip) is waited out until the
        deadline, as a slow guest would be."""
        deadline = time.monotonic() + self.wait_timeout
        while True:
            try:
                state, vmi = self._state(ref)
            except KubeError as exc:
                if not transient(exc) or time.monotonic() > deadline:
                    raise _driver_error(exc) from exc
                time.sleep(self.poll_interval)
                continue
            if state in wanted:
                return vmi
            if state == PowerState.CRASHED:
                raise errors.PermanentDriverError(f"Instance {ref.uuid} failed while {what}.")
            if time.monotonic() > deadline:
                raise errors.TransientDriverError(
                    f"Timed out after {self.wait_timeout:g} s {what} instance {ref.uuid} "
                    f"(power state {state.name})."
                )
            time.sleep(self.poll_interval)

    def _wait_for(self, check: Callable[[], bool], what: str, timeout: float | None = None) -> None:
        """Poll ``check`` until it holds (for ``timeout`` s, the driver's wait by default);
        transient API errors are waited out (see _wait)."""
        limit = self.wait_timeout if timeout is None else timeout
        deadline = time.monotonic() + limit
        while not self._checked(check, deadline):
            if time.monotonic() > deadline:
                raise errors.TransientDriverError(f"Timed out after {limit:g} s {what}.")
            time.sleep(self.poll_interval)

    def _await_rollout(
        self, ref: InstanceRef, applied: Callable[[JsonObj | None], bool], refused: str, what: str
    ) -> None:
        """Wait until the VMI shows a change made to the VM template (``applied`` of the VMI,
        None when there is none); PermanentDriverError(``refused``) once KubeVirt says it will
        apply it only at a restart (the VM's RestartRequired: vmRolloutStrategy Stage)."""

        def rolled_out() -> bool:
            if applied(self.client.get_or_none(k.VMIS, self._name(ref), self._ns(ref))):
                return True
            if condition(self.client.get(k.VMS, self._name(ref), self._ns(ref)), "RestartRequired"):  # fmt: skip
                raise errors.PermanentDriverError(refused)
            return False

        self._wait_for(rolled_out, what)

    def _retrying(self, action: Callable[[], T], what: str) -> T:
        """Run an idempotent ``action``, retrying transient API errors until the deadline.
        NotFoundError passes unchanged (callers decide what a missing object means); other
        errors become driver errors."""
        deadline = time.monotonic() + self.wait_timeout
        while True:
            try:
                return action()
            except k.NotFoundError:
                raise
            except KubeError as exc:
                if not transient(exc) or time.monotonic() > deadline:
                    raise _driver_error(exc) from exc
                LOG.warning("Kubernetes API error while %s, retrying: %s", what, exc)
            time.sleep(max(self.poll_interval, 0.1))

    @staticmethod
    def _checked(check: Callable[[], bool], deadline: float) -> bool:
        try:
            return check()
        except KubeError as exc:
            if not transient(exc) or time.monotonic() > deadline:
                raise _driver_error(exc) from exc
            return False

    # --- power primitives --------------------------------------------------------------------

    def _start(self, ref: InstanceRef) -> None:
        state, _vmi = self._retrying(lambda: self._state(ref), f"reading the VMI of {ref.uuid}")
        if state in (PowerState.SHUTDOWN, PowerState.CRASHED):

            def start() -> None:
                # 409: already starting (a retried request whose first try did arrive)
                with contextlib.suppress(k.ConflictError):
                    self.virt_api.start(self._ns(ref), self._name(ref))

            self._retrying(start, f"starting {ref.uuid}")
        self._wait(ref, {PowerState.RUNNING, PowerState.PAUSED}, "starting")

    def _stop(self, ref: InstanceRef, grace_period: int | None = None) -> None:
        state, _vmi = self._retrying(lambda: self._state(ref), f"reading the VMI of {ref.uuid}")
        if state != PowerState.SHUTDOWN:

            def stop() -> None:
                with contextlib.suppress(k.ConflictError):  # already stopping
                    self.virt_api.stop(self._ns(ref), self._name(ref), grace_period)

            self._retrying(stop, f"stopping {ref.uuid}")
        self._wait(ref, {PowerState.SHUTDOWN}, "stopping")

    def _guest_state(
        self, ref: InstanceRef, operation: str, allowed: set[PowerState]
    ) -> PowerState:
        """The power state; InvalidGuestState unless it is in ``allowed``."""
        self._require_vm(ref)
        state, _vmi = self._state(ref)
        if state not in allowed:
            raise errors.InvalidGuestState(ref.uuid, operation, state.name.lower())
        return state


TRANSIENT_STATUSES = frozenset({0, 429, 500, 502, 503, 504})


def transient(exc: KubeError) -> bool:
    """An error worth retrying: no answer, or the server is overloaded or restarting."""
    return exc.status in TRANSIENT_STATUSES and not isinstance(exc, k.ClosedError)


def _driver_error(exc: KubeError) -> errors.DriverError:
    if exc.status in (0, 409, 429, 500, 503, 504):
        return errors.TransientDriverError(f"Kubernetes API: {exc}")
    return errors.PermanentDriverError(f"Kubernetes API: {exc}")


driver_error = _driver_error
