"""The RPC client: versioned call/cast/fanout to a target, with a version cap.

Role clients (``openkeel.rpc.clients``) wrap one ``RpcClient`` each, like Nova's rpcapi modules
wrap oslo.messaging's: ``prepare(version=, server=, fanout=, topic=, timeout=)`` derives a
client for one send, ``can_send_version`` lets a method pick the newest message format the
deployment's version cap (``[upgrade_levels]``) allows.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Mapping

from openkeel import metrics
from openkeel.rpc import errors
from openkeel.rpc.message import (
    CallContext,
    Message,
    Primitive,
    Target,
    is_compatible,
    to_primitive,
)
from openkeel.rpc.transport import Transport

DEFAULT_TIMEOUT = 60.0  # Nova's [DEFAULT] rpc_response_timeout


class RpcClient:
    """Sends messages for ``target`` through ``transport``."""

    def __init__(
        self,
        transport: Transport,
        target: Target,
        *,
        version_cap: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        self.transport = transport
        self.target = target
        self.version_cap = version_cap
        self.timeout = timeout

    def prepare(
        self,
        *,
        version: str | None = None,
        server: str | None = None,
        fanout: bool | None = None,
        topic: str | None = None,
        timeout: float | None = None,
    ) -> RpcClient:
        """A client for the same transport with some target fields or the timeout replaced."""
        changes: dict[str, object] = {}
        for name, value in (
            ("version", version),
            ("server", server),
            ("fanout", fanout),
            ("topic", topic),
        ):
            if value is not None:
                changes[name] = value
        return RpcClient(
            self.transport,
            dataclasses.replace(self.target, **changes),  # type: ignore[arg-type]
            version_cap=self.version_cap,
            timeout=self.timeout if timeout is None else timeout,
        )

    def can_send_version(self, version: str) -> bool:
        """True if the version cap (if any) allows sending ``version`` messages."""
        return self.version_cap is None or is_compatible(self.version_cap, version)

    def call(self, context: CallContext, method: str, **args: object) -> Primitive:
        """Invoke ``method`` on one server and return its result (or raise its error)."""
        if self.target.fanout:
            raise errors.InvalidTarget("A call cannot be sent to a fanout target")
        metrics.count_rpc(self.target.topic, method, "call")
        try:
            reply = self.transport.call(
                self.target, self._message(context, method, args), self.timeout
            )
        except Exception:
            metrics.count_rpc_failure(self.target.topic, method)
            raise
        failure = reply["failure"]
        if failure is not None:
            metrics.count_rpc_failure(self.target.topic, method)
            raise errors.rebuild(failure["cls"], failure["message"])
        return reply["result"]

    def cast(self, context: CallContext, method: str, **args: object) -> None:
        """Send ``method`` without waiting (to every server when the target is fanout)."""
        metrics.count_rpc(self.target.topic, method, "cast")
        self.transport.cast(self.target, self._message(context, method, args))

    def _message(self, context: CallContext, method: str, args: Mapping[str, object]) -> Message:
        version = self.target.version or "1.0"
        if not self.can_send_version(version):
            raise errors.UnsupportedVersion(
                f"Requested message version, {version} is incompatible. It needs to be "
                f"equal in major version and less than or equal in minor version as the "
                f"specified version cap {self.version_cap}."
            )
        return {
            "msg_id": uuid.uuid4().hex,
            "method": method,
            "args": {name: to_primitive(value) for name, value in args.items()},
            "context": context.to_dict(),
            "version": version,
            "namespace": self.target.namespace,
            "reply_to": None,
        }
