"""SameHostFilter: with hint ``same_host``, only hosts running one of the named instances."""

from __future__ import annotations

from openkeel.scheduler.filters import BaseHostFilter
from openkeel.scheduler.host_state import HostState
from openkeel.scheduler.request import SchedulingRequest


class SameHostFilter(BaseHostFilter):
    """Passes hosts that run any instance of the ``same_host`` hint (all without it)."""

    run_filter_once_per_request = True

    def host_passes(self, host_state: HostState, request: SchedulingRequest) -> bool:
        wanted = request.hint("same_host")
        if not wanted:
            return True
        return not host_state.instances.isdisjoint(wanted)
