"""ComputeCapabilitiesFilter: flavor extra specs ``capabilities:<path>`` (and unscoped keys
naming a host attribute or stat) must match the host, with Nova's extra-spec operators
(``>=``, ``<in>``, ``s==``, ``<or>`` ...)."""

from __future__ import annotations

import json
import operator
from collections.abc import Callable
from typing import Any

from openkeel.scheduler.filters import BaseHostFilter
from openkeel.scheduler.host_state import HostState
from openkeel.scheduler.request import SchedulingRequest

_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "=": lambda x, y: float(x) >= float(y),
    "<in>": lambda x, y: y in x,
    "<all-in>": lambda x, y: all(v in x for v in y),
    "==": lambda x, y: float(x) == float(y),
    "!=": lambda x, y: float(x) != float(y),
    ">=": lambda x, y: float(x) >= float(y),
    "<=": lambda x, y: float(x) <= float(y),
    "s==": operator.eq,
    "s!=": operator.ne,
    "s<": operator.lt,
    "s<=": operator.le,
    "s>": operator.gt,
    "s>=": operator.ge,
}


def matches(value: str, requirement: str) -> bool:
    """Nova's extra_specs_ops.match."""
    words = requirement.split()
    op = words.pop(0) if words else None
    method = _OPS.get(op) if op else None
    if op != "<or>" and method is None:
        return value == requirement
    if op == "<or>":
        return value in words[0::2]
    if not words or method is None:
        return False
    try:
        return method(value, words) if op == "<all-in>" else method(value, words[0])
    except ValueError:
        return False


def _lookup(host_state: HostState, path: list[str]) -> Any:
    current: Any = host_state
    for name in path:
        if isinstance(current, str):
            try:
                current = json.loads(current)
            except ValueError:
                return None
        if isinstance(current, dict):
            current = current.get(name)
        elif isinstance(current, HostState):
            value = getattr(current, name, None)
            current = value if value is not None else current.stats.get(name)
        else:
            return None
        if current is None:
            return None
    return current


class ComputeCapabilitiesFilter(BaseHostFilter):
    """Passes hosts whose capabilities satisfy the flavor's capability extra specs."""

    run_filter_once_per_request = True

    def host_passes(self, host_state: HostState, request: SchedulingRequest) -> bool:
        specs = dict(request.flavor.extra_specs)
        bits = specs.pop("hw:maxphysaddr_bits", None)
        if bits is not None:
            specs["capabilities:cpu_info:maxphysaddr:bits"] = ">= " + bits
        for key, requirement in specs.items():
            scope = key.split(":")
            if len(scope) == 1:
                if not hasattr(host_state, key) and key not in host_state.stats:
                    continue
            elif scope[0] != "capabilities":
                continue
            else:
                scope = scope[1:]
            value = _lookup(host_state, scope)
            if value is None or not matches(str(value), requirement):
                return False
        return True
