"""The ``addFixedIp`` / ``removeFixedIp`` server actions (Nova's multinic, 2.1-2.43): after the
server (404), the policy and the lock (409), a cast to the server's host, which changes the
port and the server's network info (openkeel.compute.operations.fixed_ips). As in Nova the
answer is 202 whatever the host then finds (no port on that network, no such address: the
server's fault). Called by the multinic resource.
"""

from __future__ import annotations

from openkeel.api.usecases.server_network import ServerNetworkUseCase
from openkeel.api.usecases.servers.create import call_context
from openkeel.api.usecases.servers.lifecycle import InstanceIsLocked
from openkeel.rpc.messages import RpcMessage
from openkeel.rpc.messages.compute import AddFixedIp, RemoveFixedIp

POLICY = "os_compute_api:os-multinic:%s"


class ServerFixedIps(ServerNetworkUseCase):
    policy = POLICY

    def _send(self, server_id: str, rule: str, message: type[AddFixedIp | RemoveFixedIp],
              value: str) -> None:  # fmt: skip
        inst = self._server(server_id, rule).instance
        if inst.locked and not self._context.is_admin:
            raise InstanceIsLocked(inst.uuid)
        compute = self._services.compute
        if compute is None or not inst.host:
            return  # nothing runs the server yet: nothing to change (Nova's cast goes nowhere)
        sent: RpcMessage = message(inst.uuid, value)
        compute.cast(call_context(self._context), inst.host, sent)

    def add(self, server_id: str, network_id: str) -> None:
        self._send(server_id, "add", AddFixedIp, network_id)

    def remove(self, server_id: str, address: str) -> None:
        self._send(server_id, "remove", RemoveFixedIp, address)
