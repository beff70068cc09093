"""ServerGroupSoftAntiAffinityWeigher: for a ``soft-anti-affinity`` group, hosts running
fewer of its members weigh more."""

from __future__ import annotations

from openkeel.scheduler.host_state import HostState
from openkeel.scheduler.request import SchedulingRequest
from openkeel.scheduler.weighers import BaseHostWeigher
from openkeel.scheduler.weighers.soft_affinity import members_on_host


class ServerGroupSoftAntiAffinityWeigher(BaseHostWeigher):
    """Weight: minus the members on the host (``soft_anti_affinity_weight_multiplier``)."""

    multiplier_option = "soft_anti_affinity_weight_multiplier"

    def weigh(self, host_state: HostState, request: SchedulingRequest) -> float:
        return -float(members_on_host(host_state, request, "soft-anti-affinity"))
