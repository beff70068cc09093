"""Neutron's multiple port bindings (the ``binding-extended`` extension) for live migration,
as Nova 34.0.0 uses them (decision 0072).

Before the guest moves, each of the server's ports gets a second, INACTIVE binding on the
destination (Nova's ``bind_ports_to_host``: a port no driver binds there fails the migration
with ``PortBindingFailed``, the bindings made so far deleted); once it moved, the destination's
bindings are activated (``migrate_instance_start``: the source's become inactive, the port's
``binding:host_id`` is the destination), and the destination deletes the source's
(``setup_networks_on_host`` teardown of the previous host); a rolled-back migration deletes the
destination's. Without the extension every call is a no-op and the move re-binds the ports at
its end, as before.

The ports are the server's in Neutron (``device_id``), not the network info cache's.
Mixed into :class:`openkeel.network.neutron.NeutronNetwork`, which provides ``client``.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from openkeel.network import errors
from openkeel.network.adapter import InstanceNetRef, NetworkAdapter
from openkeel.network.neutron_client import Doc, NeutronClient, NeutronFault, NeutronUnavailable
from openkeel.network.neutron_model import UNBOUND_TYPES

LOG = logging.getLogger(__name__)

BINDING_EXTENDED = "binding-extended"
# Nova re-reads Neutron's extensions every 10 minutes (_refresh_neutron_extensions_cache).
EXTENSIONS_TTL = 600.0


class NeutronPortBindings(NetworkAdapter):
    """The port binding calls of a live migration over ``client``."""

    client: NeutronClient
    _extensions: frozenset[str] = frozenset()
    _extensions_read_at: float | None = None

    def has_port_binding_extension(self) -> bool:
        now = time.monotonic()
        if self._extensions_read_at is None or now - self._extensions_read_at > EXTENSIONS_TTL:
            found = self.client.list("extensions")
            self._extensions = frozenset(str(e.get("alias")) for e in found)
            self._extensions_read_at = now
        return BINDING_EXTENDED in self._extensions

    def _ports(self, instance: InstanceNetRef) -> list[Doc]:
        return self.client.list("ports", {"device_id": instance.uuid})

    def bind_ports_to_host(self, instance: InstanceNetRef, host: str) -> dict[str, Any] | None:
        if not self.has_port_binding_extension():
            return None
        made: dict[str, Any] = {}
        for port in self._ports(instance):
            wanted = {"host": host, "vnic_type": port.get("binding:vnic_type") or "normal",
                      "profile": port.get("binding:profile") or {}}  # fmt: skip
            try:
                binding = self.client.create_binding(port["id"], wanted)
                if binding.get("vif_type") in UNBOUND_TYPES:
                    self.client.delete_binding(port["id"], host)
                    raise NeutronFault(409, "PortBindingError", "not bound")
            except (NeutronFault, NeutronUnavailable) as exc:
                LOG.error("Binding failed for port %s and host %s: %s", port["id"], host, exc)
                self._forget(made, host)
                raise errors.PortBindingFailed(str(port["id"])) from exc
            made[str(port["id"])] = binding
        return made

    def _forget(self, made: dict[str, Any], host: str) -> None:
        for port_id in made:
            try:
                self.client.delete_binding(port_id, host)
            except NeutronFault as fault:
                if fault.status != 404:
                    LOG.warning("Failed to remove binding for port %s on host %s", port_id, host)
            except NeutronUnavailable:
                LOG.warning("Failed to remove binding for port %s on host %s", port_id, host)

    def activate_port_bindings(self, instance: InstanceNetRef, host: str) -> None:
        if not self.has_port_binding_extension():
            return
        for port in self._ports(instance):
            port_id = str(port["id"])
            try:
                binding = self.client.show_binding(port_id, host)
            except NeutronFault as fault:
                if fault.status == 404:  # this move made no bindings there: nothing to do
                    return
                LOG.error("Could not read port %s's binding on %s: %s", port_id, host, fault)
                continue
            except NeutronUnavailable as exc:
                LOG.error("Could not read port %s's binding on %s: %s", port_id, host, exc)
                continue
            if binding.get("status") == "ACTIVE":
                continue
            try:
                self.client.activate_binding(port_id, host)
            except NeutronFault as fault:
                if fault.status == 409:  # already active
                    LOG.warning("Binding for port %s and host %s is already active", port_id, host)  # fmt: skip
                    continue
                raise errors.PortBindingActivationFailed(port_id, host) from fault
            except NeutronUnavailable as exc:
                raise errors.PortBindingActivationFailed(port_id, host) from exc

    def delete_port_bindings(self, instance: InstanceNetRef, host: str) -> None:
        if not self.has_port_binding_extension():
            return
        failed: list[str] = []
        for port in self._ports(instance):
            try:
                self.client.delete_binding(port["id"], host)
            except NeutronFault as fault:
                if fault.status != 404:
                    failed.append(str(port["id"]))
            except NeutronUnavailable:
                failed.append(str(port["id"]))
        if failed:
            LOG.error("Failed to delete the bindings of ports %s on host %s", failed, host)
            raise errors.PortBindingDeletionFailed(", ".join(failed), host)
