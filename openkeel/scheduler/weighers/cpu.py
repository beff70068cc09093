"""CPUWeigher: more free vCPUs (total x allocation ratio - used) weighs more."""

from __future__ import annotations

from openkeel.scheduler.host_state import HostState
from openkeel.scheduler.request import SchedulingRequest
from openkeel.scheduler.weighers import BaseHostWeigher


class CPUWeigher(BaseHostWeigher):
    """Weight: free vCPUs after overcommit (``cpu_weight_multiplier``)."""

    multiplier_option = "cpu_weight_multiplier"

    def weigh(self, host_state: HostState, request: SchedulingRequest) -> float:
        return host_state.vcpus_total * host_state.cpu_allocation_ratio - host_state.vcpus_used
