"""A server's interfaces (``/servers/{server_id}/os-interface``): its ports through the network
adapter; attach as an RPC call to the server's host (the answer is the port), detach as a cast.

Nova's checks, in its order: the server (404), the policy, the request (400: both a network
and a port, an address without a network), the lock (409) and the state gate (409), then the
host's answer: unknown network or port 404, port in use or address taken 409, no or several
networks / a driver without hot-plug 400, a guest refusing the port 500.
"""

from __future__ import annotations

from typing import Any

from openkeel.api.usecases.server_network import ServerNetworkUseCase
from openkeel.api.usecases.servers.create import call_context
from openkeel.api.usecases.servers.lifecycle import InstanceIsLocked
from openkeel.api.usecases.servers.lookup import FoundServer
from openkeel.db.repositories import instance_actions
from openkeel.domain.errors import Conflict, Invalid, NotFound, ServiceUnavailable
from openkeel.domain.instances import Instance
from openkeel.domain.states import ensure_action_allowed
from openkeel.network import errors as net_errors
from openkeel.rpc.messages.compute import AttachInterface, DetachInterface

POLICY = "os_compute_api:os-attach-interfaces:%s"


class ServerInterfaces(ServerNetworkUseCase):
    policy = POLICY

    def list(self, server_id: str) -> list[dict[str, Any]]:
        inst = self._server(server_id, "list").instance
        return self._network.instance_ports(inst.uuid)

    def show(self, server_id: str, port_id: str) -> dict[str, Any]:
        inst = self._server(server_id, "show").instance
        try:
            port = self._network.show_port(port_id)
        except net_errors.PortNotFound as exc:
            raise NotFound(exc.message) from exc
        if port["device_id"] != inst.uuid:
            raise NotFound(f"Instance {server_id} does not have a port with id {port_id}")
        return port

    def _record(self, found: FoundServer, action: str) -> None:
        assert found.cell_uuid is not None
        with self._services.cell_dbs[found.cell_uuid].begin() as conn:
            instance_actions.start_action(
                conn, found.instance.uuid, action, request_id=self._context.request_id,
                user_id=self._context.user_id, project_id=self._context.project_id,
            )  # fmt: skip

    def _ready(self, inst: Instance, operation: str) -> str:
        if inst.locked and not self._context.is_admin:
            raise InstanceIsLocked(inst.uuid)
        ensure_action_allowed(operation, server_id=inst.uuid, vm_state=inst.vm_state,
                              task_state=inst.task_state, launched=inst.launched_at is not None)  # fmt: skip
        if not inst.host:
            raise Conflict(f"Instance {inst.uuid} is not ready")
        if self._services.compute is None:
            raise ServiceUnavailable("No compute service can be reached from this API process.")
        return inst.host

    def attach(
        self,
        server_id: str,
        network_id: str | None,
        port_id: str | None,
        address: str | None,
        tag: str | None,
    ) -> dict[str, Any]:
        found = self._server(server_id, "create")
        inst = found.instance
        if network_id and port_id:
            raise Invalid("Must not input both network_id and port_id")
        if address and not network_id:
            raise Invalid("Must input network_id when request IP address")
        host = self._ready(inst, "attach_interface")
        self._record(found, "attach_interface")
        message = AttachInterface(inst.uuid, network_id=network_id, port_id=port_id,
                                  requested_ip=address, tag=tag)  # fmt: skip
        assert self._services.compute is not None
        attached = self._services.compute.call(call_context(self._context), host, message)
        return self.show(server_id, str(attached))

    def detach(self, server_id: str, port_id: str) -> None:
        found = self._server(server_id, "delete")
        inst = found.instance
        host = self._ready(inst, "detach_interface")
        try:
            port = self._network.show_port(port_id)
        except net_errors.PortNotFound as exc:
            raise NotFound(exc.message) from exc
        if port["device_id"] != inst.uuid:
            raise NotFound(f"Port id {port_id} could not be found.")
        assert self._services.compute is not None
        self._record(found, "detach_interface")
        self._services.compute.cast(call_context(self._context), host,
                                    DetachInterface(inst.uuid, port_id=port_id))  # fmt: skip
