"""Response bodies of the server metadata API (the same at every microversion)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def metadata(items: Mapping[str, str]) -> dict[str, Any]:
    """``{"metadata": {...}}`` (index, create, update_all)."""
    return {"metadata": dict(items)}


def meta(item: Mapping[str, str]) -> dict[str, Any]:
    """``{"meta": {key: value}}`` (show, update one key)."""
    return {"meta": dict(item)}
