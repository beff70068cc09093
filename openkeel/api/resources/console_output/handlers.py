"""Handler of ``os-getConsoleOutput`` (200 ``{"output": ...}``; 404, 409 no host, 501)."""

from __future__ import annotations

from typing import Any

from openkeel.api.request import ApiRequest
from openkeel.api.usecases.console_output import console_output


def get_console_output(req: ApiRequest) -> dict[str, Any]:
    """POST /servers/{id}/action ``os-getConsoleOutput``."""
    length = req.body["os-getConsoleOutput"].get("length")
    lines = None if length is None else int(length)
    return {"output": console_output(req.services, req.context, req.params["id"], lines)}
