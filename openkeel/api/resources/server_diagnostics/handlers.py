"""Handler of GET /servers/{server_id}/diagnostics: the driver's mapping as is before 2.48,
Nova's standard view from 2.48 (every field present, unknown values null)."""

from __future__ import annotations

from typing import Any

from openkeel.api.request import ApiRequest
from openkeel.api.usecases.server_diagnostics import diagnostics

PRIMITIVE_FIELDS = (
    "state", "driver", "hypervisor", "hypervisor_os", "uptime", "config_drive", "num_cpus",
    "num_nics", "num_disks",
)  # fmt: skip
LIST_FIELDS = {
    "cpu_details": ("id", "time", "utilisation"),
    "nic_details": (
        "mac_address",
        "rx_octets",
        "rx_errors",
        "rx_drop",
        "rx_packets",
        "rx_rate",
        "tx_octets",
        "tx_errors",
        "tx_drop",
        "tx_packets",
        "tx_rate",
    ),
    "disk_details": (
        "read_bytes",
        "read_requests",
        "write_bytes",
        "write_requests",
        "errors_count",
    ),
}


def standard_view(found: dict[str, Any]) -> dict[str, Any]:
    """Nova's 2.48 diagnostics document from the host's answer."""
    body: dict[str, Any] = {name: found.get(name) for name in PRIMITIVE_FIELDS}
    for name, fields in LIST_FIELDS.items():
        body[name] = [{f: item.get(f) for f in fields} for item in found.get(name) or []]
    body["memory_details"] = {"maximum": found.get("memory_mb"), "used": found.get("memory_used_mb")}  # fmt: skip
    return body


def show_diagnostics(req: ApiRequest) -> dict[str, Any]:
    """GET /servers/{server_id}/diagnostics."""
    standard = req.at_least("2.48")
    found = diagnostics(req.services, req.context, req.params["server_id"], standard)
    return standard_view(found) if standard else found
