"""Typed RPC clients, one per role, with Nova's method names and message versions.

The api tier and the roles call these instead of ``RpcClient`` directly; the matching servers
(``openkeel.compute``, ``openkeel.conductor``, ``openkeel.scheduler``) serve the same methods.
"""

from openkeel.rpc.clients.compute import ComputeRpcClient
from openkeel.rpc.clients.conductor import ConductorRpcClient
from openkeel.rpc.clients.scheduler import SchedulerRpcClient

__all__ = ["ComputeRpcClient", "ConductorRpcClient", "SchedulerRpcClient"]
