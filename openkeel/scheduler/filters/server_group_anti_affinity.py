"""ServerGroupAntiAffinityFilter: members of an ``anti-affinity`` group spread over hosts,
at most ``max_server_per_host`` of them (rule from 2.64, default 1) per host."""

from __future__ import annotations

from openkeel.scheduler.filters import BaseHostFilter
from openkeel.scheduler.host_state import HostState
from openkeel.scheduler.request import SchedulingRequest


class ServerGroupAntiAffinityFilter(BaseHostFilter):
    """Passes hosts running fewer than ``max_server_per_host`` members of the group."""

    def host_passes(self, host_state: HostState, request: SchedulingRequest) -> bool:
        group = request.instance_group
        if group is None or group.policy != "anti-affinity":
            return True
        if request.instance_uuid and request.instance_uuid in host_state.instances:
            return True
        on_host = host_state.instances & group.members
        return len(on_host) < group.max_server_per_host
