"""AvailabilityZoneFilter: only hosts in the requested availability zone.

A host's zone comes from its aggregates' ``availability_zone`` metadata, else
``[DEFAULT] default_availability_zone``. The scheduler applies it to every request naming a
zone (Nova enforces zones through a mandatory request filter), listed or not.
"""

from __future__ import annotations

from openkeel.domain.aggregates import AZ_KEY
from openkeel.scheduler.filters import BaseHostFilter
from openkeel.scheduler.host_state import HostState
from openkeel.scheduler.request import SchedulingRequest


class AvailabilityZoneFilter(BaseHostFilter):
    """Passes hosts whose zone is the request's (any host when it names none)."""

    run_filter_once_per_request = True

    def host_passes(self, host_state: HostState, request: SchedulingRequest) -> bool:
        wanted = request.availability_zone
        if not wanted:
            return True
        zones = set(host_state.aggregate_values(AZ_KEY))
        if zones:
            return wanted in zones
        return wanted == self.settings.default_availability_zone
