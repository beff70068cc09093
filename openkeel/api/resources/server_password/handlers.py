"""Server password handlers: call the use case. Registered by ``routes.py``."""

from __future__ import annotations

from typing import Any

from openkeel.api.request import ApiRequest
from openkeel.api.usecases.server_password import ServerPasswordService


def show_server_password(req: ApiRequest) -> dict[str, Any]:
    """GET /servers/{server_id}/os-server-password."""
    password = ServerPasswordService(req.services, req.context).show(req.params["server_id"])
    return {"password": password}


def clear_server_password(req: ApiRequest) -> None:
    """DELETE /servers/{server_id}/os-server-password (204)."""
    ServerPasswordService(req.services, req.context).clear(req.params["server_id"])
