"""Handlers of version discovery and /v2/info/*.

The versions claimed stop at 2.9 (decision 0034): no interoperable import (2.6), no multiple
stores (2.8) beyond the one local store, no cache API (2.14+).
"""

from __future__ import annotations

from typing import Any

from openkeel.image_api.request import ImageRequest, Reply

CURRENT = 9


def _versions(base: str) -> dict[str, Any]:
    return {
        "versions": [
            {
                "id": f"v2.{minor}",
                "status": "CURRENT" if minor == CURRENT else "SUPPORTED",
                "links": [{"rel": "self", "href": f"{base}/v2/"}],
            }
            for minor in range(CURRENT, -1, -1)
        ]
    }


def list_versions(req: ImageRequest) -> Reply:
    """GET /image and /image/v2: 300 Multiple Choices, as Glance's root."""
    return Reply(_versions(req.base), 300)


def show_versions(req: ImageRequest) -> Reply:
    """GET /image/versions: the same document, 200."""
    return Reply(_versions(req.base))


def show_import_info(req: ImageRequest) -> Reply:
    """GET /v2/info/import: no import methods (upload with PUT .../file)."""
    methods = {"description": "Import methods available.", "type": "array", "value": []}
    return Reply({"import-methods": methods})


def show_stores_info(req: ImageRequest) -> Reply:
    """GET /v2/info/stores: the one local store in the data directory."""
    store = {"id": "local", "description": "Files in the data directory.", "default": True}
    return Reply({"stores": [store]})
