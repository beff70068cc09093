"""Host weighers: one small pure class per file; ``weigh_hosts`` sums their normalized,
multiplied scores as Nova does (each weigher's raw weights are scaled to [0, 1] over the
hosts, min to max, all equal -> 0; then times the multiplier of the host, which aggregate
metadata of the same name can override, the smallest value winning). Called by
``openkeel.scheduler.selection``.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from openkeel.scheduler.host_state import HostState
from openkeel.scheduler.request import SchedulingRequest

LOG = logging.getLogger(__name__)

ALL_WEIGHERS = "nova.scheduler.weights.all_weighers"


@dataclass(frozen=True)
class WeigherSettings:
    """``[filter_scheduler] <name>_weight_multiplier`` values by option name."""

    multipliers: Mapping[str, float] = field(default_factory=dict)


class BaseHostWeigher:
    """A weigher: raw weight per host; higher wins after normalization and multiplier."""

    multiplier_option: ClassVar[str] = ""
    minval: ClassVar[float | None] = None
    maxval: ClassVar[float | None] = None

    def __init__(self, settings: WeigherSettings) -> None:
        self.settings = settings

    def weigh(self, host_state: HostState, request: SchedulingRequest) -> float:
        raise NotImplementedError

    def weight_multiplier(self, host_state: HostState) -> float:
        """The configured multiplier, or the smallest aggregate metadata override."""
        default = float(self.settings.multipliers.get(self.multiplier_option, 1.0))
        values = host_state.aggregate_values(self.multiplier_option)
        if not values:
            return default
        try:
            return min(float(v) for v in values)
        except ValueError:
            LOG.warning("Could not decode '%s' weight multiplier", self.multiplier_option)
            return default


WEIGHER_MODULES = {
    "CPUWeigher": "cpu",
    "DiskWeigher": "disk",
    "RAMWeigher": "ram",
    "ServerGroupSoftAffinityWeigher": "soft_affinity",
    "ServerGroupSoftAntiAffinityWeigher": "soft_anti_affinity",
}


def load_weighers(names: Iterable[str], settings: WeigherSettings) -> list[BaseHostWeigher]:
    """The named weighers (Nova class names or dotted paths); ``all_weighers`` means all.

    Nova weighers not implemented here are skipped with a warning.
    """
    wanted: list[str] = []
    for name in names:
        if name.strip() == ALL_WEIGHERS:
            wanted.extend(WEIGHER_MODULES)
        else:
            wanted.append(name.strip().rsplit(".", 1)[-1])
    loaded: list[BaseHostWeigher] = []
    for short in dict.fromkeys(wanted):
        if short not in WEIGHER_MODULES:
            LOG.warning("Scheduler weigher %s is not implemented; it is skipped", short)
            continue
        module = importlib.import_module(f"{__name__}.{WEIGHER_MODULES[short]}")
        loaded.append(getattr(module, short)(settings))
    return loaded


def normalize(
    weights: Sequence[float], minval: float | None = None, maxval: float | None = None
) -> list[float]:
    """Scale ``weights`` to [0, 1] between ``minval`` and ``maxval`` (default: their range)."""
    if not weights:
        return []
    low = float(min(weights) if minval is None else minval)
    high = float(max(weights) if maxval is None else maxval)
    if low == high:
        return [0.0] * len(weights)
    return [(w - low) / (high - low) for w in weights]


def weigh_hosts(
    weighers: Sequence[BaseHostWeigher],
    hosts: Sequence[HostState],
    request: SchedulingRequest,
) -> list[tuple[float, HostState]]:
    """(weight, host) pairs, best first (ties keep the input order)."""
    totals = [0.0] * len(hosts)
    if len(hosts) > 1:
        for weigher in weighers:
            raw = []
            for host in hosts:
                value = weigher.weigh(host, request)
                if weigher.minval is not None:
                    value = max(value, weigher.minval)
                if weigher.maxval is not None:
                    value = min(value, weigher.maxval)
                raw.append(value)
            for i, scaled in enumerate(normalize(raw, weigher.minval, weigher.maxval)):
                totals[i] += weigher.weight_multiplier(hosts[i]) * scaled
    ranked = sorted(range(len(hosts)), key=lambda i: -totals[i])
    return [(totals[i], hosts[i]) for i in ranked]
