"""Messaging between roles (api, conductor, scheduler, compute): transports, clients, servers.

Roles send with ``RpcClient`` (or the typed role clients in ``openkeel.rpc.clients``) and serve
with ``RpcServer``; ``get_transport(conf.transport_url)`` picks in-process or RabbitMQ.
"""

from openkeel.rpc.client import RpcClient
from openkeel.rpc.errors import (
    InvalidTarget,
    MessagingError,
    MessagingTimeout,
    NoSuchMethod,
    RemoteError,
    TransportUnavailable,
    UnsupportedVersion,
)
from openkeel.rpc.message import CallContext, Target
from openkeel.rpc.server import RpcServer
from openkeel.rpc.transport import Transport, get_transport

__all__ = [
    "CallContext",
    "InvalidTarget",
    "MessagingError",
    "MessagingTimeout",
    "NoSuchMethod",
    "RemoteError",
    "RpcClient",
    "RpcServer",
    "Target",
    "Transport",
    "TransportUnavailable",
    "UnsupportedVersion",
    "get_transport",
]
