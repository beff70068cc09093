"""Shared machinery of the role clients: version selection under the deployment's cap.

Each role client (compute, conductor, scheduler) holds one ``RpcClient`` for its topic and picks,
per method, the newest message version the cap allows, as Nova's rpcapi modules do.
"""

from __future__ import annotations

from collections.abc import Mapping

from openkeel.rpc import errors
from openkeel.rpc.client import DEFAULT_TIMEOUT, RpcClient
from openkeel.rpc.message import SupportsPrimitive, Target
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
