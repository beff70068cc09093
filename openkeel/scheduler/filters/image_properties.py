"""ImagePropertiesFilter: the image's ``hw_architecture``, ``img_hv_type`` and ``hw_vm_mode``
must be among the host's ``supported_instances`` (arch, hypervisor type, vm mode) triples,
and ``img_hv_requested_version`` must hold for the hypervisor version."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from openkeel.scheduler.filters import BaseHostFilter
from openkeel.scheduler.host_state import HostState
from openkeel.scheduler.request import SchedulingRequest

# Nova's canonical spellings (fields.Architecture / HVType / VMMode canonicalize).
_ARCH_ALIASES = {
    "i386": "i686",
    "i486": "i686",
    "i586": "i686",
    "x86_32": "i686",
    "amd64": "x86_64",
    "x64": "x86_64",
    "arm64": "aarch64",
}
_HV_ALIASES = {"xapi": "xen"}
_MODE_ALIASES = {"pv": "xen", "hv": "hvm", "baremetal": "hvm"}


def _canonical(value: Any, aliases: Mapping[str, str]) -> str | None:
    if not value:
        return None
    text = str(value).lower()
    return aliases.get(text, text)


def _version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.strip().split(".") if part.isdigit())


def _from_int_version(version: int) -> tuple[int, ...]:
    """Nova packs versions as major*1000000 + minor*1000 + micro."""
    return version // 1000000, version // 1000 % 1000, version % 1000


def _version_ok(required: str | None, hypervisor_version: int) -> bool:
    if not (required and hypervisor_version):
        return True
    have = _from_int_version(hypervisor_version)
    for clause in str(required).split(","):
        clause = clause.strip()
        op = next((o for o in (">=", "<=", "==", "!=", ">", "<") if clause.startswith(o)), "==")
        want = _version_tuple(clause[len(op) :] if clause.startswith(op) else clause)
        checks = {
            ">=": have >= want,
            "<=": have <= want,
            "==": have == want,
            "!=": have != want,
            ">": have > want,
            "<": have < want,
        }
        if not checks[op]:
            return False
    return True


class ImagePropertiesFilter(BaseHostFilter):
    """Passes hosts supporting the image's architecture, hypervisor type and vm mode."""

    run_on_rebuild = True

    run_filter_once_per_request = True

    def host_passes(self, host_state: HostState, request: SchedulingRequest) -> bool:
        props = request.image.properties
        wanted = (
            _canonical(
                props.get("hw_architecture", self.settings.default_architecture), _ARCH_ALIASES
            ),
            _canonical(props.get("img_hv_type"), _HV_ALIASES),
            _canonical(props.get("hw_vm_mode"), _MODE_ALIASES),
        )
        if not any(wanted):
            return True
        required_version = props.get("img_hv_requested_version")
        for supported in host_state.supported_instances:
            offered = {str(item).lower() for item in supported if item}
            fits = all(w is None or w in offered for w in wanted)
            if fits and _version_ok(required_version, host_state.hypervisor_version):
                return True
        return False
