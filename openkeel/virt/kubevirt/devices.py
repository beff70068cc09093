"""Consoles and diagnostics of KubeVirt guests.

Mixed into KubevirtDriver. Volume hot-plug is in volumes.py, interfaces in interfaces.py. Consoles
are virt-api websocket subresources reached through the API server; the console log is the
virt-launcher's ``guest-console-log`` container.
"""

from __future__ import annotations

from datetime import UTC, datetime
from urllib.parse import urlsplit

from openkeel.domain.states import PowerState
from openkeel.virt import errors
from openkeel.virt.kubevirt import diagnostics
from openkeel.virt.kubevirt.base import KubevirtBase, driver_error
from openkeel.virt.kubevirt.client import JsonObj, KubeError
from openkeel.virt.kubevirt.virtapi import subresource_path
from openkeel.virt.model import (
    ConsoleInfo,
    Diagnostics,
    InstanceRef,
    JsonValue,
)


class DevicesMixin(KubevirtBase):
    """Consoles, diagnostics."""

    # --- consoles and diagnostics ----------------------------------------------------------

    def _running_vmi(self, ref: InstanceRef, what: str) -> JsonObj:
        self._require_vm(ref)
        state, vmi = self._state(ref)
        if vmi is None or state == PowerState.SHUTDOWN:
            raise errors.InvalidGuestState(ref.uuid, what, state.name.lower())
        return vmi

    def get_console_output(self, instance: InstanceRef) -> str:
        self._running_vmi(instance, "get the console output of")
        try:
            return self.virt_api.console_log(self._ns(instance), self._name(instance))
        except KubeError as exc:
            raise driver_error(exc) from exc

    def _console(self, ref: InstanceRef, action: str) -> ConsoleInfo:
        self._running_vmi(ref, f"open the {action} console of")
        server = urlsplit(self.client.config.server)
        port = server.port or (443 if server.scheme == "https" else 80)
        path = subresource_path(self._ns(ref), "virtualmachineinstances", self._name(ref), action)
        return ConsoleInfo(server.hostname or "", port, internal_access_path=path)

    def get_vnc_console(self, instance: InstanceRef) -> ConsoleInfo:
        return self._console(instance, "vnc")

    def get_serial_console(self, instance: InstanceRef) -> ConsoleInfo:
        return self._console(instance, "console")

    def get_diagnostics(self, instance: InstanceRef) -> dict[str, JsonValue]:
        vm = self._require_vm(instance)
        _state, vmi = self._state(instance)
        return diagnostics.legacy_diagnostics(vm, vmi, datetime.now(UTC))

    def get_instance_diagnostics(self, instance: InstanceRef) -> Diagnostics:
        vm = self._require_vm(instance)
        state, vmi = self._state(instance)
        return diagnostics.instance_diagnostics(vm, vmi, state, datetime.now(UTC))
