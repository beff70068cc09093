"""Live migration's port bindings on the embedded network (decision 0072): the embedded
service serves Neutron's ``binding-extended``, so the flat adapter makes, activates and
deletes a server's port bindings as the Neutron adapter does against Neutron (Nova's
``bind_ports_to_host``, ``migrate_instance_start``, the teardown of a host's bindings).

Mixed into :class:`openkeel.network.flat.FlatNetwork`, which provides ``service``.
"""

from __future__ import annotations

import logging
from typing import Any

from openkeel.network import errors
from openkeel.network.adapter import InstanceNetRef, NetworkAdapter
from openkeel.network.embedded import port_bindings as bindings
from openkeel.network.embedded.faults import NetworkFault
from openkeel.network.embedded.service import Caller, NetworkService

LOG = logging.getLogger(__name__)
_ADMIN = Caller(None, True)  # Nova's service user


class FlatPortBindings(NetworkAdapter):
    """The port binding calls of a live migration over the embedded network service."""

    service: NetworkService

    def _port_ids(self, instance: InstanceNetRef) -> list[str]:
        return [str(p["id"]) for p in self.service.store.list("ports", device_id=instance.uuid)]

    def bind_ports_to_host(self, instance: InstanceNetRef, host: str) -> dict[str, Any] | None:
        made: dict[str, Any] = {}
        for port_id in self._port_ids(instance):
            port = self.service.store.get("ports", port_id) or {}
            ref = {"host": host, "vnic_type": port.get("binding_vnic_type") or "normal",
                   "profile": port.get("binding_profile") or {}}  # fmt: skip
            try:
                made[port_id] = bindings.create_binding(self.service, _ADMIN, port_id, ref)
            except NetworkFault as fault:
                LOG.error("Binding failed for port %s and host %s: %s", port_id, host, fault)
                for done in made:
                    self._delete(done, host)
                raise errors.PortBindingFailed(port_id) from fault
        return made

    def activate_port_bindings(self, instance: InstanceNetRef, host: str) -> None:
        for port_id in self._port_ids(instance):
            try:
                found = bindings.show_binding(self.service, _ADMIN, port_id, host)
            except NetworkFault:  # this move made no bindings there
                return
            if found["status"] == "ACTIVE":
                continue
            try:
                bindings.activate_binding(self.service, _ADMIN, port_id, host)
            except NetworkFault as fault:
                raise errors.PortBindingActivationFailed(port_id, host) from fault

    def delete_port_bindings(self, instance: InstanceNetRef, host: str) -> None:
        for port_id in self._port_ids(instance):
            port = self.service.store.get("ports", port_id)
            if port is not None and port["binding_host_id"] != host:  # never the active one
                self._delete(port_id, host)

    def _delete(self, port_id: str, host: str) -> None:
        try:
            bindings.delete_binding(self.service, _ADMIN, port_id, host)
        except NetworkFault as fault:
            if fault.status != 404:
                raise errors.PortBindingDeletionFailed(port_id, host) from fault
