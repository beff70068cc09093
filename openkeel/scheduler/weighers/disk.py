"""DiskWeigher: more free local disk weighs more."""

from __future__ import annotations

from openkeel.scheduler.host_state import HostState
from openkeel.scheduler.request import SchedulingRequest
from openkeel.scheduler.weighers import BaseHostWeigher


class DiskWeigher(BaseHostWeigher):
    """Weight: the host's free disk in MB (``disk_weight_multiplier``)."""

    multiplier_option = "disk_weight_multiplier"

    def weigh(self, host_state: HostState, request: SchedulingRequest) -> float:
        return float(host_state.free_disk_mb)
