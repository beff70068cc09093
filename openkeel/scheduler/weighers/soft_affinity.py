"""ServerGroupSoftAffinityWeigher: for a ``soft-affinity`` group, hosts running more of its
members weigh more."""

from __future__ import annotations

from openkeel.scheduler.host_state import HostState
from openkeel.scheduler.request import SchedulingRequest
from openkeel.scheduler.weighers import BaseHostWeigher


def members_on_host(host_state: HostState, request: SchedulingRequest, policy: str) -> int:
    """How many members of the request's group run on the host (0 for other policies)."""
    group = request.instance_group
    if group is None or group.policy != policy:
        return 0
    return len(host_state.instances & group.members)


class ServerGroupSoftAffinityWeigher(BaseHostWeigher):
    """Weight: members of the group on the host (``soft_affinity_weight_multiplier``)."""

    multiplier_option = "soft_affinity_weight_multiplier"

    def weigh(self, host_state: HostState, request: SchedulingRequest) -> float:
        return float(members_on_host(host_state, request, "soft-affinity"))
