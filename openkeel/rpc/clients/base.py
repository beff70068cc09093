"""Shared machinery of the role clients: version selection under the deployment's cap.

Each role client (compute, conductor, scheduler) holds one ``RpcClient`` for its topic and sends
typed messages (``openkeel.rpc.messages``) at the newest version the cap allows, as Nova's rpcapi
modules pick versions per method.
"""

from __future__ import annotations

from collections.abc import Mapping

from openkeel.rpc import errors
from openkeel.rpc.client import DEFAULT_TIMEOUT, RpcClient
from openkeel.rpc.message import CallContext, Primitive, SupportsPrimitive, Target
from openkeel.rpc.messages import RpcMessage
from openkeel.rpc.transport import Transport

LONG_RPC_TIMEOUT = 1800.0  # Nova's [DEFAULT] long_rpc_timeout

Payload = SupportsPrimitive | Mapping[str, object]


class RoleRpcClient:
    """Base of the typed role clients."""

    topic: str
    namespace: str | None = None
    base_version: str
    aliases: Mapping[str, str] = {}

    def __init__(
        self,
        transport: Transport,
        *,
        version_cap: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        long_timeout: float = LONG_RPC_TIMEOUT,
    ) -> None:
        cap = self.aliases.get(version_cap, version_cap) if version_cap else None
        self.rpc = RpcClient(
            transport,
            Target(self.topic, version=self.base_version, namespace=self.namespace),
            version_cap=cap,
            timeout=timeout,
        )
        self.long_timeout = long_timeout

    def pick_version(self, method: str, *candidates: str) -> str:
        """The first of ``candidates`` (newest first) that the version cap allows."""
        for version in candidates:
            if self.rpc.can_send_version(version):
                return version
        raise errors.UnsupportedVersion(
            f"Cannot send {method}: version cap {self.rpc.version_cap} allows none of "
            f"{', '.join(candidates)}"
        )

    def send_cast(
        self,
        context: CallContext,
        message: RpcMessage,
        *,
        server: str | None = None,
        fanout: bool = False,
        topic: str | None = None,
    ) -> None:
        """Cast ``message`` (to one ``server`` of the topic, any, or all with ``fanout``;
        ``topic`` replaces the client's)."""
        version = self.pick_version(message.method, *message.versions)
        rpc = self.rpc.prepare(version=version, server=server, fanout=fanout or None, topic=topic)
        rpc.cast(context, message.method, **message.to_args(version))

    def send_call(
        self,
        context: CallContext,
        message: RpcMessage,
        *,
        server: str | None = None,
        long: bool = False,
        topic: str | None = None,
    ) -> Primitive:
        """Call ``message`` and return the answer (``long``: the long RPC timeout)."""
        version = self.pick_version(message.method, *message.versions)
        timeout = self.long_timeout if long else None
        rpc = self.rpc.prepare(version=version, server=server, timeout=timeout, topic=topic)
        return rpc.call(context, message.method, **message.to_args(version))
