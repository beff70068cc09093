"""DifferentHostFilter: with hint ``different_host``, only hosts running none of them."""

from __future__ import annotations

from openkeel.scheduler.filters import BaseHostFilter
from openkeel.scheduler.host_state import HostState
from openkeel.scheduler.request import SchedulingRequest


class DifferentHostFilter(BaseHostFilter):
    """Passes hosts that run no instance of the ``different_host`` hint."""

    run_filter_once_per_request = True

    def host_passes(self, host_state: HostState, request: SchedulingRequest) -> bool:
        avoided = request.hint("different_host")
        if not avoided:
            return True
        return host_state.instances.isdisjoint(avoided)
