"""Handlers of ``GET /extensions`` and ``GET /extensions/{alias}``.

Registered by the extensions routes. Both check ``os_compute_api:extensions`` with an empty
target (default ``@``, anyone); the legacy /v2 mount sees one extra record.
"""

from __future__ import annotations

from typing import Any

from openkeel.api.faults import NOT_FOUND_MESSAGE
from openkeel.api.microversion import LEGACY_V2
from openkeel.api.request import ApiRequest
from openkeel.api.resources.extensions import views
from openkeel.api.resources.extensions.records import (
    EXTENSIONS,
    LEGACY_V2_EXTENSIONS,
    Extension,
)
from openkeel.domain.errors import NotFound

POLICY = "os_compute_api:extensions"


def _visible(req: ApiRequest) -> tuple[Extension, ...]:
    return LEGACY_V2_EXTENSIONS if req.version == LEGACY_V2 else EXTENSIONS


def list_extensions(req: ApiRequest) -> dict[str, Any]:
    """Every legacy extension record."""
    req.context.can(POLICY, target={})
    return views.index_view(_visible(req))


def show_extension(req: ApiRequest) -> dict[str, Any]:
    """One record by alias; 404 with webob's generic message when unknown."""
    req.context.can(POLICY, target={})
    alias = req.params["alias"]
    for ext in _visible(req):
        if ext.alias == alias:
            return views.show_view(ext)
    raise NotFound(NOT_FOUND_MESSAGE)
