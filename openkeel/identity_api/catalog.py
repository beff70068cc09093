"""The service catalog the embedded identity service hands out with its tokens.

Entries are given by the composition root (what this deployment serves: compute, image,
identity; Glance's URL when a real Glance is configured). A path (``/v2.1``) is served by the
process the client reached, so it is made absolute with the root URL of that request: the
catalog is right whatever host name or port the client used (decision 0040). Every service has
one endpoint per interface (public, internal, admin) in ``RegionOne``; ids are stable across
restarts.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

REGION = "RegionOne"
INTERFACES = ("public", "internal", "admin")
_NAMESPACE = uuid.UUID("0f3b1b8e-6d0c-4c55-9a43-6b3f2f1f6b40")


@dataclass(frozen=True)
class CatalogEntry:
    """One service: its type, name and where it is (absolute URL, or a path on this root)."""

    type: str
    name: str
    location: str

    @property
    def id(self) -> str:
        return uuid.uuid5(_NAMESPACE, f"service:{self.type}:{self.name}").hex

    def url(self, root: str) -> str:
        return self.location if "://" in self.location else root + self.location

    def endpoint_id(self, interface: str) -> str:
        return uuid.uuid5(_NAMESPACE, f"endpoint:{self.type}:{interface}").hex


def token_catalog(entries: tuple[CatalogEntry, ...], root: str) -> list[dict[str, Any]]:
    """The ``catalog`` of a token document."""
    return [
        {
            "id": entry.id,
            "type": entry.type,
            "name": entry.name,
            "endpoints": [
                {
                    "id": entry.endpoint_id(interface),
                    "interface": interface,
                    "region": REGION,
                    "region_id": REGION,
                    "url": entry.url(root),
                }
                for interface in INTERFACES
            ],
        }
        for entry in entries
    ]


def service_view(entry: CatalogEntry, base: str) -> dict[str, Any]:
    """``GET /v3/services`` item."""
    return {
        "id": entry.id,
        "type": entry.type,
        "name": entry.name,
        "enabled": True,
        "description": "",
        "links": {"self": f"{base}/v3/services/{entry.id}"},
    }


def endpoint_views(entry: CatalogEntry, root: str, base: str) -> list[dict[str, Any]]:
    """``GET /v3/endpoints`` items of one service."""
    return [
        {
            "id": entry.endpoint_id(interface),
            "interface": interface,
            "region": REGION,
            "region_id": REGION,
            "service_id": entry.id,
            "url": entry.url(root),
            "enabled": True,
            "links": {"self": f"{base}/v3/endpoints/{entry.endpoint_id(interface)}"},
        }
        for interface in INTERFACES
    ]
