"""Host filters: one small pure class per file, ``host_passes(host_state, request) -> bool``.

``load_filters(names, settings)`` builds the ``[filter_scheduler] enabled_filters`` list by
Nova's class names; ``filter_hosts`` applies them in order, skipping on later instances of
a multi-create request the filters whose answer cannot change within a request
(``run_filter_once_per_request``). Called by ``openkeel.scheduler.selection``.
"""

from __future__ import annotations

import datetime
import importlib
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from openkeel.scheduler.host_state import HostState, utcnow
from openkeel.scheduler.request import SchedulingRequest

LOG = logging.getLogger(__name__)


@dataclass(frozen=True)
class FilterSettings:
    """What filters read from the configuration, plus the clock ComputeFilter judges by."""

    service_down_time: int = 60
    default_availability_zone: str = "nova"
    default_architecture: str | None = None
    clock: Callable[[], datetime.datetime] = field(default=utcnow)


class BaseHostFilter:
    """A filter: built once with the settings, asked per host and request."""

    run_filter_once_per_request: ClassVar[bool] = False
    # Whether the filter judges a rebuild with a new image on the instance's own host (Nova's
    # RUN_ON_REBUILD): only those about the image do; capacity, state and placement do not.
    run_on_rebuild: ClassVar[bool] = False

    def __init__(self, settings: FilterSettings) -> None:
        self.settings = settings

    def host_passes(self, host_state: HostState, request: SchedulingRequest) -> bool:
        raise NotImplementedError


# Nova's filter name -> module of this package defining it.
FILTER_MODULES = {
    "AvailabilityZoneFilter": "availability_zone",
    "ComputeCapabilitiesFilter": "compute_capabilities",
    "ComputeFilter": "compute",
    "DifferentHostFilter": "different_host",
    "ImagePropertiesFilter": "image_properties",
    "SameHostFilter": "same_host",
    "ServerGroupAffinityFilter": "server_group_affinity",
    "ServerGroupAntiAffinityFilter": "server_group_anti_affinity",
}

# Nova filters not implemented here: accepted in the configuration, skipped with a warning.
NOVA_ONLY_FILTERS = frozenset(
    {
        "AggregateImagePropertiesIsolation",
        "AggregateInstanceExtraSpecsFilter",
        "AggregateMultiTenancyIsolation",
        "AllHostsFilter",
        "AggregateTypeAffinityFilter",
        "IoOpsFilter",
        "IsolatedHostsFilter",
        "JsonFilter",
        "MetricsFilter",
        "NUMATopologyFilter",
        "NumInstancesFilter",
        "PciPassthroughFilter",
        "SimpleCIDRAffinityFilter",
    }
)


class FilterNotFound(Exception):
    """An enabled filter name that neither OpenKeel nor Nova has."""


def filter_class(name: str) -> type[BaseHostFilter]:
    """The class of filter ``name`` (a Nova class name, dotted paths reduced to it)."""
    short = name.rsplit(".", 1)[-1]
    module = importlib.import_module(f"{__name__}.{FILTER_MODULES[short]}")
    cls: type[BaseHostFilter] = getattr(module, short)
    return cls


def load_filters(names: Iterable[str], settings: FilterSettings) -> list[BaseHostFilter]:
    """Instances of the named filters, in order; unknown names raise FilterNotFound."""
    loaded: list[BaseHostFilter] = []
    for name in names:
        short = name.strip().rsplit(".", 1)[-1]
        if short in FILTER_MODULES:
            loaded.append(filter_class(short)(settings))
        elif short in NOVA_ONLY_FILTERS:
            LOG.warning("Scheduler filter %s is not implemented; it is skipped", short)
        elif short:
            raise FilterNotFound(f"Scheduler Host Filter {short} could not be found.")
    return loaded


def filter_hosts(
    filters: Sequence[BaseHostFilter],
    hosts: Iterable[HostState],
    request: SchedulingRequest,
    index: int = 0,
) -> list[HostState]:
    """The hosts that pass every filter (``index`` > 0: a later instance of the request)."""
    remaining = list(hosts)
    rebuild = request.is_rebuild
    for host_filter in filters:
        if index > 0 and host_filter.run_filter_once_per_request:
            continue
        if rebuild and not host_filter.run_on_rebuild:
            continue
        remaining = [h for h in remaining if host_filter.host_passes(h, request)]
        LOG.debug("%s returned %d host(s)", type(host_filter).__name__, len(remaining))
        if not remaining:
            break
    return remaining
