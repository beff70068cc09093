"""The simulator's model of KubeVirt networking (virt-handler's interface status, NIC hot-plug).

Documented KubeVirt behaviour it keeps:

- ``status.interfaces[]`` lists what the guest has: ``name``, ``mac``, ``infoSource`` and, where
  known, ``ipAddress``/``ipAddresses``. A ``masquerade`` interface on the pod network reports the
  virt-launcher pod's IP, and every new pod (a start, a migration) has a new one. A ``bridge``
  interface on a Multus network reports the address its NetworkAttachmentDefinition's IPAM gave
  (here: the NADs in :attr:`Addressing.ipam_nads`); one without IPAM reports no address (the
  guest's own static configuration is only seen by the guest agent, which is not simulated).
- NIC hot-plug (KubeVirt 1.1+): under ``vmRolloutStrategy: LiveUpdate`` a new ``bridge``/``sriov``
  interface on a Multus network in the VM template is plugged into the running VMI, and
  ``state: absent`` unplugs one (it leaves ``status.interfaces``); nothing is hot-plugged on the
  pod network, and any other interface change (or any change under ``Stage``) waits for a
  restart (``RestartRequired``).
"""

from __future__ import annotations

import copy
import ipaddress
import threading
from dataclasses import dataclass, field

from openkeel.virt.kubevirt.client import JsonObj


@dataclass
class Addressing:
    """Pod IPs and NAD IPAM ranges of the simulated cluster."""

    pod_cidr: str = "10.244.0.0/16"
    ipam_nads: dict[str, str] = field(default_factory=dict)  # "<ns>/<nad>" -> CIDR
    _next: dict[str, int] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def allocate(self, cidr: str) -> str:
        net = ipaddress.ip_network(cidr)
        with self._lock:
            index = self._next.get(cidr, 10)
            self._next[cidr] = index + 1
        return str(net.network_address + index)


def _interfaces(spec: JsonObj) -> list[JsonObj]:
    found: list[JsonObj] = spec.get("domain", {}).get("devices", {}).get("interfaces", []) or []
    return found


def _nad(spec: JsonObj, name: str) -> str | None:
    for network in spec.get("networks", []) or []:
        if network["name"] == name:
            value = (network.get("multus") or {}).get("networkName")
            return str(value) if value else None
    return None


def interface_status(spec: JsonObj, previous: list[JsonObj], addressing: Addressing, new_pod: bool) -> list[JsonObj]:  # fmt: skip
    """``status.interfaces`` of a VMI with ``spec``: addresses kept from ``previous`` unless the
    VMI is in a new pod (the pod network's address is the pod's)."""
    before = {i["name"]: i for i in previous}
    status = []
    for iface in _interfaces(spec):
        if iface.get("state") == "absent":
            continue
        name = iface["name"]
        entry: JsonObj = {"name": name, "mac": iface.get("macAddress", ""), "infoSource": "domain"}
        kept = before.get(name, {}).get("ipAddress")
        nad = _nad(spec, name)
        cidr = addressing.pod_cidr if "masquerade" in iface else addressing.ipam_nads.get(nad or "")
        if cidr is not None:
            fresh = new_pod and "masquerade" in iface
            address = kept if kept and not fresh else addressing.allocate(cidr)
            entry.update(ipAddress=address, ipAddresses=[address], infoSource="domain, multus-status")  # fmt: skip
        status.append(entry)
    return status


def roll_out(template: JsonObj, vmi_spec: JsonObj, live_update: bool) -> tuple[JsonObj | None, bool]:  # fmt: skip
    """The VMI spec after hot-plugging the template's interface changes (None: nothing to
    change or nothing that can be), and whether a restart is required for the rest."""
    wanted, current = _interfaces(template), _interfaces(vmi_spec)
    if wanted == current:
        return None, False
    if not live_update:
        return None, True
    by_name = {i["name"]: i for i in current}
    restart = any(i["name"] not in {w["name"] for w in wanted} for i in current)
    for iface in wanted:
        old = by_name.get(iface["name"])
        if old is None:
            pluggable = ("bridge" in iface or "sriov" in iface) and _nad(template, iface["name"])
            restart = restart or not pluggable
        else:
            # Only the state may change, and only to absent (unplug) or back to up.
            same_device = {**old, "state": None} == {**iface, "state": None}
            restart = restart or not same_device or iface.get("state") not in ("absent", None)
    if restart:
        return None, True
    updated = copy.deepcopy(vmi_spec)
    updated.setdefault("domain", {}).setdefault("devices", {})["interfaces"] = copy.deepcopy(wanted)
    updated["networks"] = copy.deepcopy(template.get("networks", []))
    return updated, False
