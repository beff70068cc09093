"""Client of the scheduler role (topic ``scheduler``), Nova's SchedulerAPI 4.x.

The messages are in ``openkeel.rpc.messages.scheduler``: ``SelectDestinations`` is a call to
any scheduler, the cache updates are fanout casts to all of them.
"""

from __future__ import annotations

from openkeel.rpc.clients.base import RoleRpcClient
from openkeel.rpc.message import CallContext, Primitive
from openkeel.rpc.messages import RpcMessage
from openkeel.rpc.messages.scheduler import SelectDestinations

SERVER_VERSION = "4.5"


class SchedulerRpcClient(RoleRpcClient):
    """Talks to any scheduler; info updates go to all of them (fanout)."""

    topic = "scheduler"
    base_version = "4.0"

    def select_destinations(self, context: CallContext, message: SelectDestinations) -> Primitive:
        """Ask any scheduler for destinations (call, long RPC timeout)."""
        return self.send_call(context, message, long=True)

    def fanout(self, context: CallContext, message: RpcMessage) -> None:
        """Tell every scheduler (fanout cast)."""
        self.send_cast(context, message, fanout=True)
