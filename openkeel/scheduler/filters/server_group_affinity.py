"""ServerGroupAffinityFilter: members of an ``affinity`` group go where the group already is."""

from __future__ import annotations

from openkeel.scheduler.filters import BaseHostFilter
from openkeel.scheduler.host_state import HostState
from openkeel.scheduler.request import SchedulingRequest


class ServerGroupAffinityFilter(BaseHostFilter):
    """Passes the group's hosts (any host while the group runs nowhere yet)."""

    def host_passes(self, host_state: HostState, request: SchedulingRequest) -> bool:
        group = request.instance_group
        if group is None or group.policy != "affinity":
            return True
        if not group.hosts:
            return True
        return host_state.host in group.hosts
