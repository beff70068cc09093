"""Client of the compute role (topic ``compute``, server = a host), ComputeAPI 6.x.

The messages are in ``openkeel.rpc.messages.compute``; instance-scoped ones go to the
instance's host (``instance_host``) unless the sender names another, as in Nova. The steps
that continue an operation already running (``ALT_METHODS``) go to topic ``compute-alt``, which
a stopping host keeps serving while its operations finish (Nova 34, ComputeAPI 6.5).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from openkeel.rpc import errors
from openkeel.rpc.clients.base import RoleRpcClient
from openkeel.rpc.message import CallContext, Primitive
from openkeel.rpc.messages import RpcMessage

SERVER_VERSION = "6.5"
ALT_TOPIC = "compute-alt"
ALT_VERSION = "6.5"
# Nova's ``prepare_for_alt_rpcserver`` methods: follow-ups of operations in progress.
ALT_METHODS = frozenset({
    "check_instance_shared_storage", "finish_resize", "finish_revert_resize",
    "finish_snapshot_based_resize_at_dest", "finish_revert_snapshot_based_resize_at_source",
    "validate_console_port", "live_migration", "post_live_migration_at_destination",
    "pre_live_migration", "prep_snapshot_based_resize_at_source", "remove_volume_connection",
    "resize_instance", "rollback_live_migration_at_destination",
    "drop_move_claim_at_destination", "external_instance_event",
})  # fmt: skip

# [upgrade_levels] compute release aliases.
RELEASE_ALIASES: Mapping[str, str] = {
    "queens": "5.0",
    "rocky": "5.0",
    "stein": "5.1",
    "train": "5.3",
    "ussuri": "5.11",
    "victoria": "5.12",
    "wallaby": "6.0",
    "xena": "6.0",
    "yoga": "6.0",
    "zed": "6.1",
    "antelope": "6.2",
    "bobcat": "6.2",
    "caracal": "6.3",
    "dalmatian": "6.3",
    "epoxy": "6.4",
    "flamingo": "6.4",
    "gazpacho": "6.5",
    "hibiscus": "6.5",
}


class HasHost(Protocol):
    """An instance as far as routing goes: the host it lives on."""

    @property
    def host(self) -> str | None: ...


class ComputeRpcClient(RoleRpcClient):
    """Talks to the compute service of one host: ``cast``/``call`` a message to ``host``."""

    topic = "compute"
    base_version = "6.0"
    aliases = RELEASE_ALIASES

    def cast(self, context: CallContext, host: str, message: RpcMessage) -> None:
        """Send ``message`` to ``host`` without waiting."""
        self.send_cast(context, message, server=host, topic=self._topic_of(message))

    def call(
        self, context: CallContext, host: str, message: RpcMessage, *, long: bool = False
    ) -> Primitive:
        """Send ``message`` to ``host`` and wait for its answer."""
        return self.send_call(context, message, server=host, long=long,
                              topic=self._topic_of(message))  # fmt: skip

    def _topic_of(self, message: RpcMessage) -> str | None:
        """``compute-alt`` for a follow-up step when the version cap allows 6.5 (a host of
        an older release does not listen there), else the client's topic."""
        if message.method in ALT_METHODS and self.rpc.can_send_version(ALT_VERSION):
            return ALT_TOPIC
        return None


def instance_host(instance: HasHost) -> str:
    """The host an instance-scoped message goes to (Nova: ``instance.host``)."""
    if not instance.host:
        raise errors.InvalidTarget("No compute host specified")
    return instance.host
