"""Client of the conductor role (topic ``conductor``): Nova's ComputeTaskAPI methods.

They live in the ``compute_task`` namespace of the conductor topic, as in Nova. The messages are
in ``openkeel.rpc.messages.conductor``.
"""

from __future__ import annotations

from openkeel.rpc.clients.base import RoleRpcClient
from openkeel.rpc.message import CallContext, Primitive
from openkeel.rpc.messages import RpcMessage

SERVER_VERSION = "1.26"  # ComputeTaskManager


class ConductorRpcClient(RoleRpcClient):
    """Talks to any conductor."""

    topic = "conductor"
    namespace = "compute_task"
    base_version = "1.0"

    def cast(self, context: CallContext, message: RpcMessage) -> None:
        """Send ``message`` to any conductor without waiting."""
        self.send_cast(context, message)

    def call(self, context: CallContext, message: RpcMessage) -> Primitive:
        """Send ``message`` to any conductor and wait (long RPC timeout: tasks take a while)."""
        return self.send_call(context, message, long=True)
