"""RAMWeigher: more free RAM weighs more (spread); a negative multiplier stacks."""

from __future__ import annotations

from openkeel.scheduler.host_state import HostState
from openkeel.scheduler.request import SchedulingRequest
from openkeel.scheduler.weighers import BaseHostWeigher


class RAMWeigher(BaseHostWeigher):
    """Weight: the host's free RAM in MB (``ram_weight_multiplier``)."""

    multiplier_option = "ram_weight_multiplier"

    def weigh(self, host_state: HostState, request: SchedulingRequest) -> float:
        return float(host_state.free_ram_mb)
