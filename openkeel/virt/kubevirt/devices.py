"""Volume hot-plug, consoles and diagnostics of KubeVirt guests.

Mixed into KubevirtDriver. Volumes use virt-api's addvolume/removevolume (the only hot-plug
API for disks); interfaces are in interfaces.py. Consoles
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
from openkeel.virt.kubevirt.manifests import naming
from openkeel.virt.kubevirt.virtapi import subresource_path
from openkeel.virt.model import (
    ConsoleInfo,
    Diagnostics,
    InstanceRef,
    JsonValue,
    VolumeAttachment,
)


def _template(vm: JsonObj) -> JsonObj:
    spec: JsonObj = vm["spec"]["template"]["spec"]
    return spec


def volume_name(volume_id: str) -> str:
    return naming.volume_claim_name(volume_id)


class DevicesMixin(KubevirtBase):
    """Hot-plug, consoles, diagnostics."""

    # --- volumes ---------------------------------------------------------------------------

    def _has_volume(self, ref: InstanceRef, name: str) -> bool:
        vm = self._require_vm(ref)
        return any(v.get("name") == name for v in _template(vm).get("volumes", []))

    def attach_volume(self, instance: InstanceRef, attachment: VolumeAttachment) -> None:
        if attachment.connection_info.get("driver_volume_type") == "local":
            # The all-in-one's volumes are files beside the API (decision 0057), not PVCs in
            # the cluster: nothing the guest could be given.
            raise errors.NotSupported("attach_volume of a volume outside the cluster", self.name)
        name = volume_name(attachment.volume_id)
        if self._has_volume(instance, name):
            return
        bus = attachment.disk_bus if attachment.disk_bus in ("scsi", "virtio") else "scsi"
        options = {
            "name": name,
            "disk": {"name": name, "disk": {"bus": bus}, "serial": attachment.volume_id[:20]},
            "volumeSource": {"persistentVolumeClaim": {"claimName": name, "hotpluggable": True}},
        }
        self._virt(lambda: self.virt_api.add_volume(self._ns(instance), self._name(instance), options))  # fmt: skip
        self._wait_for(
            lambda: self._has_volume(instance, name), f"attaching {attachment.volume_id}"
        )

    def detach_volume(self, instance: InstanceRef, volume_id: str) -> None:
        name = volume_name(volume_id)
        if not self._has_volume(instance, name):
            return
        self._virt(lambda: self.virt_api.remove_volume(self._ns(instance), self._name(instance), name))  # fmt: skip
        self._wait_for(lambda: not self._has_volume(instance, name), f"detaching {volume_id}")

    def _virt(self, call: object) -> None:
        try:
            call()  # type: ignore[operator]
        except KubeError as exc:
            raise driver_error(exc) from exc

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
