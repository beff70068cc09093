"""ComputeFilter: only hosts whose compute service is enabled and up."""

from __future__ import annotations

from openkeel.scheduler.filters import BaseHostFilter
from openkeel.scheduler.host_state import HostState
from openkeel.scheduler.request import SchedulingRequest


class ComputeFilter(BaseHostFilter):
    """Passes hosts with an enabled service heard from within ``service_down_time``."""

    run_filter_once_per_request = True

    def host_passes(self, host_state: HostState, request: SchedulingRequest) -> bool:
        service = host_state.service
        if service.disabled:
            return False
        return service.is_up(self.settings.clock(), self.settings.service_down_time)
