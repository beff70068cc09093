"""Interface hot-plug and the addresses the cluster gives KubeVirt guests.

Mixed into KubevirtDriver. Where each port goes is ``manifests.networks.target_of`` (the
operator's ``[kubevirt] network_mappings``). Hot-plug is an edit of the VM template that
KubeVirt's ``vmRolloutStrategy: LiveUpdate`` carries to the running guest: a new ``bridge``
(or ``sriov``) interface on a Multus network is plugged; ``state: absent`` unplugs one. KubeVirt
hot-plugs nothing on the pod network, and under ``Stage`` the VM only reports
``RestartRequired``: both are refused (the template is put back).

Addresses: a port on the pod network (masquerade) or on a ``dhcp:`` NAD gets its address from
the cluster, not from the network service. ``get_guest_addresses`` reads them from the VMI's
``status.interfaces``; the VMI watch emits ``ADDRESSES_CHANGED`` when they change (a new pod
after a start, a migration, an evacuation), and compute records them on the ports.
"""

from __future__ import annotations

import ipaddress
import threading
from collections.abc import Callable
from datetime import UTC, datetime

from openkeel.virt import errors
from openkeel.virt.kubevirt import client as k
from openkeel.virt.kubevirt.base import KubevirtBase
from openkeel.virt.kubevirt.client import JsonObj
from openkeel.virt.kubevirt.manifests import naming, networks
from openkeel.virt.kubevirt.manifests.settings import KubevirtSettings
from openkeel.virt.model import InstanceRef, LifecycleEvent, LifecycleTransition, NetworkInterface

Addresses = dict[str, tuple[str, ...]]  # MAC (lower case) -> addresses


def _template(vm: JsonObj) -> JsonObj:
    spec: JsonObj = vm["spec"]["template"]["spec"]
    return spec


def _dhcp_nads(settings: KubevirtSettings) -> set[str]:
    prefix = networks.DHCP_PREFIX
    return {v.removeprefix(prefix) for v in settings.network_mappings.values() if v.startswith(prefix)}  # fmt: skip


def cluster_addresses(vmi: JsonObj | None, settings: KubevirtSettings) -> Addresses:
    """The addresses the cluster gave the VMI's cluster-addressed interfaces (masquerade on
    the pod network, bridge on a ``dhcp:`` NAD), by MAC; link-local ones left out."""
    if vmi is None:
        return {}
    spec = vmi.get("spec", {})
    dhcp_nads = _dhcp_nads(settings)
    nad_of = {n["name"]: (n.get("multus") or {}).get("networkName") for n in spec.get("networks", []) or []}  # fmt: skip
    cluster = {
        iface["name"]
        for iface in spec.get("domain", {}).get("devices", {}).get("interfaces", []) or []
        if "masquerade" in iface or nad_of.get(iface["name"]) in dhcp_nads
    }
    found: Addresses = {}
    for status in vmi.get("status", {}).get("interfaces", []) or []:
        if status.get("name") not in cluster or not status.get("mac"):
            continue
        ips = status.get("ipAddresses") or ([status["ipAddress"]] if status.get("ipAddress") else [])  # fmt: skip
        usable = tuple(ip for ip in ips if not ipaddress.ip_address(ip.split("/")[0]).is_link_local)  # fmt: skip
        if usable:
            found[str(status["mac"]).lower()] = usable
    return found


class AddressTracker:
    """Last seen cluster addresses per server; emits ADDRESSES_CHANGED when they change."""

    def __init__(self, emit: Callable[[LifecycleEvent], None]) -> None:
        self._emit = emit
        self._lock = threading.Lock()
        self._known: dict[str, Addresses] = {}

    def observe(self, uuid: str, addresses: Addresses) -> None:
        with self._lock:
            if not addresses or self._known.get(uuid) == addresses:
                return
            self._known[uuid] = addresses
        self._emit(LifecycleEvent(uuid, LifecycleTransition.ADDRESSES_CHANGED, datetime.now(UTC)))  # fmt: skip

    def forget(self, uuid: str) -> None:
        with self._lock:
            self._known.pop(uuid, None)


class InterfacesMixin(KubevirtBase):
    """attach_interface / detach_interface and get_guest_addresses."""

    def get_guest_addresses(self, instance: InstanceRef) -> Addresses:
        vmi, _version = self._vmi(instance)
        return cluster_addresses(vmi, self.settings)

    def attach_interface(self, instance: InstanceRef, vif: NetworkInterface) -> None:
        target = networks.target_of(vif, self.settings, self._ns(instance))
        if target.pod:
            raise errors.NotSupported("attaching an interface on the pod network", "kubevirt")
        iface, net = networks.build_nic(vif, target, None)
        name = iface["name"]

        def plug(vm: JsonObj) -> None:
            tmpl = _template(vm)
            interfaces = tmpl["domain"].setdefault("devices", {}).setdefault("interfaces", [])
            for existing in interfaces:
                if existing["name"] == name:
                    existing.pop("state", None)
                    return
            interfaces.append(iface)
            tmpl.setdefault("networks", []).append(net)

        def unplug_again(vm: JsonObj) -> None:
            _drop_interface(vm, name)

        self._edit_template(instance, plug)
        self._roll_out(instance, lambda vmi: name in _plugged(vmi), f"plugging port {vif.port_id}", unplug_again)  # fmt: skip

    def detach_interface(self, instance: InstanceRef, port_id: str) -> None:
        name = naming.interface_name(port_id)
        vm = self._require_vm(instance)
        current = next((i for i in _interfaces(_template(vm)) if i["name"] == name), None)
        if current is None or current.get("state") == "absent":
            return
        if "masquerade" in current:
            raise errors.NotSupported("detaching the pod network interface", "kubevirt")

        def mark_absent(vm: JsonObj) -> None:
            for existing in _interfaces(_template(vm)):
                if existing["name"] == name:
                    existing["state"] = "absent"

        def put_back(vm: JsonObj) -> None:
            for existing in _interfaces(_template(vm)):
                if existing["name"] == name:
                    existing.pop("state", None)

        self._edit_template(instance, mark_absent)
        self._roll_out(instance, lambda vmi: name not in _plugged(vmi), f"unplugging port {port_id}", put_back)  # fmt: skip

    def _roll_out(
        self,
        ref: InstanceRef,
        done: Callable[[JsonObj], bool],
        what: str,
        undo: k.Mutator,
    ) -> None:
        """Wait until the running VMI shows the template change (nothing to wait for when
        the VM is stopped: its next start takes the template); undo it when KubeVirt will
        not roll it out (RestartRequired) or the wait fails."""

        def applied(vmi: JsonObj | None) -> bool:
            return vmi is None or vmi.get("status", {}).get("phase") != "Running" or done(vmi)

        refused = (f"Cannot hot-plug on {ref.uuid} while {what}: KubeVirt applies the change "
                   "only at the next restart (its vmRolloutStrategy must be LiveUpdate).")  # fmt: skip
        try:
            self._await_rollout(ref, applied, refused, f"{what} of {ref.uuid}")
        except BaseException:
            self._edit_template(ref, undo)
            raise

    def _edit_template(self, ref: InstanceRef, mutate: k.Mutator) -> None:
        self._require_vm(ref)
        try:
            self._retrying(lambda: self.client.update(k.VMS, self._name(ref), mutate, self._ns(ref)), f"editing the VM of {ref.uuid}")  # fmt: skip
        except k.NotFoundError as exc:
            raise errors.InstanceNotFound(ref.uuid) from exc


def _interfaces(template: JsonObj) -> list[JsonObj]:
    found: list[JsonObj] = template.get("domain", {}).get("devices", {}).get("interfaces", [])
    return found


def _plugged(vmi: JsonObj) -> set[str]:
    """Interfaces the guest has now (virt-handler reports them in ``status.interfaces``)."""
    return {str(i.get("name")) for i in vmi.get("status", {}).get("interfaces", []) or []}


def _drop_interface(vm: JsonObj, name: str) -> None:
    tmpl = _template(vm)
    devices = tmpl["domain"].get("devices", {})
    devices["interfaces"] = [i for i in devices.get("interfaces", []) if i["name"] != name]
    tmpl["networks"] = [n for n in tmpl.get("networks", []) if n["name"] != name]
