"""Client of the scheduler role (topic ``scheduler``), Nova's SchedulerAPI 4.x."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

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
        """Pick hosts (and alternates) for ``instance_uuids`` per the request spec (call).

        ``spec_obj`` is the request spec primitive (keys: openkeel.scheduler.request). The
        answer: with ``return_objects``, per instance a list of Selection dicts [chosen (its
        allocations claimed in Placement), alternates...]; else one ``{host, nodename,
        limits}`` per instance. Raises openkeel.domain.errors.NoValidHost.
        """
        version = self.pick_version("select_destinations", "4.5", "4.4")
        return self.rpc.prepare(version=version, timeout=self.long_timeout).call(
            context,
            "select_destinations",
            spec_obj=spec_obj,
            instance_uuids=list(instance_uuids),
            return_objects=return_objects,
            return_alternates=return_alternates,
        )

    def update_aggregates(
        self, context: CallContext, aggregates: Payload | Sequence[Payload]
    ) -> None:
        """Tell every scheduler that aggregates changed: ``{id, uuid, name, hosts, metadata}``
        each (fanout cast)."""
        version = self.pick_version("update_aggregates", "4.1")
        payload = [aggregates] if isinstance(aggregates, Mapping) else aggregates
        self.rpc.prepare(version=version, fanout=True).cast(
            context, "update_aggregates", aggregates=payload
        )

    def delete_aggregate(self, context: CallContext, aggregate: Payload) -> None:
        """Tell every scheduler that an aggregate is gone (fanout cast)."""
        version = self.pick_version("delete_aggregate", "4.1")
        self.rpc.prepare(version=version, fanout=True).cast(
            context, "delete_aggregate", aggregate=aggregate
        )

    def update_instance_info(
        self, context: CallContext, host_name: str, instance_info: Payload | Sequence[Payload]
    ) -> None:
        """Tell every scheduler about instances now on a host: one ``{uuid, ...}`` or a list
        of them (fanout cast)."""
        version = self.pick_version("update_instance_info", "4.2")
        self.rpc.prepare(version=version, fanout=True).cast(
            context, "update_instance_info", host_name=host_name, instance_info=instance_info
        )

    def delete_instance_info(
        self, context: CallContext, host_name: str, instance_uuid: str
    ) -> None:
        """Tell every scheduler an instance left a host (fanout cast)."""
        version = self.pick_version("delete_instance_info", "4.2")
        self.rpc.prepare(version=version, fanout=True).cast(
            context, "delete_instance_info", host_name=host_name, instance_uuid=instance_uuid
        )

    def sync_instance_info(
        self, context: CallContext, host_name: str, instance_uuids: Sequence[str]
    ) -> None:
        """Tell every scheduler the full list of a host's instances (fanout cast)."""
        version = self.pick_version("sync_instance_info", "4.2")
        self.rpc.prepare(version=version, fanout=True).cast(
            context, "sync_instance_info", host_name=host_name, instance_uuids=list(instance_uuids)
        )
