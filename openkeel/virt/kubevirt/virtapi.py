"""The KubeVirt operations that exist only as virt-api subresources, behind one interface.

The driver prefers object operations (create/patch/delete of VMs, VMIMs, snapshots); what only
virt-api can do (start/stop of a ``runStrategy: Manual`` VM, pause, soft reboot, reset, volume
hot-plug, the guest console log) goes through :class:`VirtApi`. :class:`HttpVirtApi` calls the
real ``subresources.kubevirt.io`` group; tests plug a stand-in that follows the same rules.
"""

from __future__ import annotations

from typing import Protocol

from openkeel.virt.kubevirt.client import PODS, JsonObj, KubeClient

SUBRESOURCES = "/apis/subresources.kubevirt.io/v1"
CONSOLE_CONTAINER = "guest-console-log"


class VirtApi(Protocol):
    """virt-api subresources the driver uses (names as in KubeVirt's REST API)."""

    def start(self, namespace: str, vm: str) -> None: ...
    def stop(self, namespace: str, vm: str, grace_period: int | None = None) -> None: ...
    def pause(self, namespace: str, vmi: str) -> None: ...
    def unpause(self, namespace: str, vmi: str) -> None: ...
    def soft_reboot(self, namespace: str, vmi: str) -> None: ...
    def reset(self, namespace: str, vmi: str) -> None: ...
    def add_volume(self, namespace: str, vm: str, options: JsonObj) -> None: ...
    def remove_volume(self, namespace: str, vm: str, volume: str) -> None: ...
    def console_log(self, namespace: str, vmi: str) -> str: ...


def subresource_path(namespace: str, kind: str, name: str, action: str) -> str:
    return f"{SUBRESOURCES}/namespaces/{namespace}/{kind}/{name}/{action}"


class HttpVirtApi:
    """The real virt-api, reached through the API server's aggregation layer."""

    def __init__(self, client: KubeClient) -> None:
        self.client = client

    def _put(self, namespace: str, kind: str, name: str, action: str, body: JsonObj) -> None:
        self.client.request("PUT", subresource_path(namespace, kind, name, action), body)

    def start(self, namespace: str, vm: str) -> None:
        self._put(namespace, "virtualmachines", vm, "start", {})

    def stop(self, namespace: str, vm: str, grace_period: int | None = None) -> None:
        body: JsonObj = {} if grace_period is None else {"gracePeriod": grace_period}
        self._put(namespace, "virtualmachines", vm, "stop", body)

    def pause(self, namespace: str, vmi: str) -> None:
        self._put(namespace, "virtualmachineinstances", vmi, "pause", {})

    def unpause(self, namespace: str, vmi: str) -> None:
        self._put(namespace, "virtualmachineinstances", vmi, "unpause", {})

    def soft_reboot(self, namespace: str, vmi: str) -> None:
        self._put(namespace, "virtualmachineinstances", vmi, "softreboot", {})

    def reset(self, namespace: str, vmi: str) -> None:
        self._put(namespace, "virtualmachineinstances", vmi, "reset", {})

    def add_volume(self, namespace: str, vm: str, options: JsonObj) -> None:
        self._put(namespace, "virtualmachines", vm, "addvolume", options)

    def remove_volume(self, namespace: str, vm: str, volume: str) -> None:
        self._put(namespace, "virtualmachines", vm, "removevolume", {"name": volume})

    def console_log(self, namespace: str, vmi: str) -> str:
        """Serial console log from the virt-launcher pod's ``guest-console-log`` container."""
        pods = self.client.items(PODS, namespace, f"kubevirt.io/domain={vmi}")
        if not pods:
            return ""
        path = PODS.path(namespace, pods[0]["metadata"]["name"], "log")
        return self.client.get_text(path, {"container": CONSOLE_CONTAINER}) or ""
