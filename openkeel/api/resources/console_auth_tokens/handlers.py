"""Handler of ``GET /os-console-auth-tokens/{id}``: 400 before 2.31 (only rdp-html5 was
served then, gone with Hyper-V), 404 an unknown or expired token; ``tls_port`` from 2.99 for
spice-direct."""

from __future__ import annotations

from typing import Any

from openkeel.api.request import ApiRequest
from openkeel.api.resources.removed.handlers import RDP_CONSOLE_MESSAGE as BAD_REQUEST
from openkeel.api.usecases.remote_consoles import show_token
from openkeel.domain.errors import Invalid


def show_console_auth_token(req: ApiRequest) -> dict[str, Any]:
    """GET /os-console-auth-tokens/{id}."""
    if not req.at_least("2.31"):
        raise Invalid(BAD_REQUEST)
    target = show_token(req.services, req.context, req.params["id"]).target
    console: dict[str, Any] = {
        "instance_uuid": target.instance_uuid,
        "host": target.host,
        "port": target.port,
        "internal_access_path": target.internal_access_path,
    }
    if target.console_type == "spice-direct" and req.at_least("2.99"):
        console["tls_port"] = target.tls_port
    return {"console": console}
