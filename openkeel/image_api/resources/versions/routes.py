"""Routes of version discovery and /v2/info/*."""

from __future__ import annotations

from openkeel.image_api.request import Endpoint, RouteTable
from openkeel.image_api.resources.versions import handlers


def register(table: RouteTable) -> None:
    """Add discovery (anonymous) and info routes to ``table``."""
    table.add("GET", "/", Endpoint(handlers.list_versions, anonymous=True))
    table.add("GET", "/versions", Endpoint(handlers.show_versions, anonymous=True))
    table.add("GET", "/v2", Endpoint(handlers.list_versions, anonymous=True))
    table.add("GET", "/v2/info/import", Endpoint(handlers.show_import_info))
    table.add("GET", "/v2/info/stores", Endpoint(handlers.show_stores_info))
