"""Routes of the versions resource inside /v2.1 (``/`` there is shadowed by the mount)."""

from __future__ import annotations

from typing import Any

from openkeel.api import versions
from openkeel.api.request import ApiRequest
from openkeel.api.routing import RouteTable, endpoint
from openkeel.api.validation import Versioned, loose_query
from openkeel.domain.errors import NotFound

_QUERY = Versioned.of(("2.1", loose_query()))


def show_version(req: ApiRequest) -> dict[str, Any]:
    """The single-version document for ``v2.0`` or ``v2.1``."""
    mount = {"v2.1": "v2.1", "v2.0": "v2"}.get(req.params.get("id", "v2.1"))
    if mount is None:
        raise NotFound("The resource could not be found.")
    return versions.version_document(mount, req.bookmark_base)


def register(table: RouteTable) -> None:
    """Add the routes to ``table``."""
    table.add("GET", "/", endpoint(show_version, query=_QUERY))
    table.add("GET", "/versions/{id}", endpoint(show_version, query=_QUERY))
