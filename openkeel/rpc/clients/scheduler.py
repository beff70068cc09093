"""Client of the scheduler role (topic ``scheduler``), Nova's SchedulerAPI 4.x."""

from __future__ import annotations

from collections.abc import Sequence

from openkeel.rpc.clients.base import Payload, RoleRpcClient
from openkeel.rpc.message import CallContext, Primitive

SERVER_VERSION = "4.5"


class SchedulerRpcClient(RoleRpcClient):
    """Talks to any scheduler; info updates go to all of them (fanout)."""

    topic = "scheduler"
    base_version = "4.0"

    def select_destinations(
        self,
        context: CallContext,
        spec_obj: Payload,
        instance_uuids: Sequence[str],
        *,
        return_objects: bool = False,
        return_alternates: bool = False,
    ) -> Primitive:
        """Pick hosts (and alternates) for ``instance_uuids`` per the request spec (call)."""
        version = self.pick_version("select_destinations", "4.5", "4.4")
        return self.rpc.prepare(version=version, timeout=self.long_timeout).call(
            context,
            "select_destinations",
            spec_obj=spec_obj,
            instance_uuids=list(instance_uuids),
            return_objects=return_objects,
            return_alternates=return_alternates,
        )

    def update_instance_info(
        self, context: CallContext, host_name: str, instance_info: Payload
    ) -> None:
        """Tell every scheduler about a host's instances (fanout cast)."""
        version = self.pick_version("update_instance_info", "4.2")
        self.rpc.prepare(version=version, fanout=True).cast(
            context, "update_instance_info", host_name=host_name, instance_info=instance_info
        )
