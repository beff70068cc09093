"""Response bodies of the extensions resource (the same at every microversion).

Called by the extensions handlers with records from ``records.py``.
"""

from __future__ import annotations

from typing import Any

from openkeel.api.resources.extensions.records import Extension

# Every legacy record carries the same placeholder namespace and date.
NAMESPACE = "http://docs.openstack.org/compute/ext/fake_xml"
UPDATED = "2014-12-03T00:00:00Z"


def extension_view(ext: Extension) -> dict[str, Any]:
    """One extension record as Nova renders it."""
    return {
        "alias": ext.alias,
        "description": ext.description,
        "links": [],
        "name": ext.name,
        "namespace": NAMESPACE,
        "updated": UPDATED,
    }


def index_view(extensions: tuple[Extension, ...]) -> dict[str, Any]:
    """``{"extensions": [...]}``."""
    return {"extensions": [extension_view(ext) for ext in extensions]}


def show_view(ext: Extension) -> dict[str, Any]:
    """``{"extension": {...}}``."""
    return {"extension": extension_view(ext)}
