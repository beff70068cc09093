"""Version discovery documents: ``GET /`` (all versions), ``/v2.1/`` (one), other paths (300).

Served outside microversion control, as Nova does.
"""

from __future__ import annotations

from typing import Any

from openkeel.api.microversion import MAX_VERSION, MIN_VERSION

_V20 = {
    "id": "v2.0",
    "status": "DEPRECATED",
    "version": "",
    "min_version": "",
    "updated": "2025-07-04T12:00:00Z",
}
_V21 = {
    "id": "v2.1",
    "status": "CURRENT",
    "version": str(MAX_VERSION),
    "min_version": str(MIN_VERSION),
    "updated": "2013-07-23T11:33:21Z",
}
_MOUNTS = {"v2.0": "v2", "v2.1": "v2.1"}


def _media_types(version_id: str) -> list[dict[str, str]]:
    number = version_id.lstrip("v")
    return [
        {
            "base": "application/json",
            "type": f"application/vnd.openstack.compute+json;version={number}",
        }
    ]


def version_document(mount: str, base: str) -> dict[str, Any]:
    """``GET /v2.1/`` or ``GET /v2/``: the single-version document."""
    info = _V21 if mount == "v2.1" else _V20
    links = [
        {"rel": "self", "href": f"{base}/{mount}/"},
        {"rel": "describedby", "type": "text/html", "href": "http://docs.openstack.org/"},
    ]
    return {"version": {**info, "links": links, "media-types": _media_types(str(info["id"]))}}


def root_or_choices(path: str, base: str) -> tuple[int, dict[str, Any]]:
    """``GET /`` lists versions (200); any other unversioned path gets 300 choices."""
    if path in ("", "/"):
        return 200, {
            "versions": [
                {**info, "links": [{"rel": "self", "href": f"{base}/{_MOUNTS[str(info['id'])]}/"}]}
                for info in (_V20, _V21)
            ]
        }
    choices = [
        {
            "id": info["id"],
            "status": info["status"],
            "links": [{"rel": "self", "href": f"{base}/{_MOUNTS[str(info['id'])]}{path}"}],
            "media-types": _media_types(str(info["id"])),
        }
        for info in (_V20, _V21)
    ]
    return 300, {"choices": choices}
